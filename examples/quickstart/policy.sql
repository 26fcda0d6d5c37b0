-- Weave quickstart policy: the scheduling examples of the Weave paper.
--
-- Tables hold the cluster state. The @variable_columns annotation marks the
-- columns Weave decides: here, the node each pending pod is placed on.
-- Views annotated @hard_constraint must hold for every row they select;
-- views annotated @soft_constraint are maximised (their values summed).
-- Views without annotation are either evaluated by the database (when they
-- read no decision column) or compiled into the model as intermediates.
--
-- Try:
--   weave check --schema examples/quickstart/policy.sql
--   weave solve --schema examples/quickstart/policy.sql --data examples/quickstart/state.sql --timeout 2s

-- The cluster's nodes, their health and spare CPU (in millicores).
create table node
(
  name varchar(100) not null primary key,
  unschedulable boolean not null,
  memory_pressure boolean not null,
  disk_pressure boolean not null,
  ready boolean not null,
  available_cpu_capacity integer not null
);

-- Pods waiting to be scheduled. node_name is the decision: Weave fills it
-- in with the name of a node.
-- @variable_columns (node_name)
create table pending_pod
(
  pod_name varchar(100) not null primary key,
  status varchar(10) not null,
  namespace varchar(100) not null,
  node_name varchar(100),
  cpu_request integer not null,
  has_requested_node_affinity boolean not null
);

-- Labels on nodes, e.g. (node-a, zone, us-east-1a).
create table node_label
(
  node_name varchar(100) not null,
  label_key varchar(100) not null,
  label_value varchar(100) not null
);

-- The labels a pod with node affinity requires (any one of them will do).
create table pod_node_selector
(
  pod_name varchar(100) not null,
  label_key varchar(100) not null,
  label_value varchar(100) not null
);

-- Candidate nodes for each pod with node affinity: the nodes carrying one
-- of the labels the pod asks for. It reads input columns only, so Weave
-- pushes it down: the database creates and evaluates it.
create view candidate_nodes_for_pods as
select pod_node_selector.pod_name as pod_name, node_label.node_name as node_name
from pod_node_selector
join node_label
  on pod_node_selector.label_key = node_label.label_key
 and pod_node_selector.label_value = node_label.label_value;

-- Hard constraint: a pod may only be placed on a healthy node that accepts
-- new pods (not cordoned, no memory or disk pressure, ready).
-- @hard_constraint
create view constraint_node_predicates as
select * from pending_pod
join node
  on pending_pod.node_name = node.name
where
  node.unschedulable = false and
  node.memory_pressure = false and
  node.disk_pressure = false and
  node.ready = true;

-- Intermediate view over the decision column: the CPU each node has left
-- once the pods placed on it are counted. Weave compiles it into the model.
create view spare_capacity_per_node as
select (node.available_cpu_capacity
        - sum(pending_pod.cpu_request)) as cpu_spare
from node
join pending_pod
  on pending_pod.node_name = node.name
group by node.name;

-- Soft constraint: balance the load by maximising the smallest spare
-- capacity over the nodes that receive pods.
-- @soft_constraint
create view constraint_load_balance_cpu as
select min(cpu_spare) from spare_capacity_per_node;

-- Hard constraint: a pod that requested node affinity must land on one of
-- its candidate nodes.
-- @hard_constraint
create view constraint_node_affinity as
select *
from pending_pod
where pending_pod.has_requested_node_affinity = false or
      pending_pod.node_name in
         (select node_name
          from candidate_nodes_for_pods
          where pending_pod.pod_name =
                candidate_nodes_for_pods.pod_name);
