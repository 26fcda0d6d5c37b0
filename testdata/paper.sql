-- The SQL examples of the Weave paper, unchanged, with the tables they read.

create table node
(
  name varchar(100) not null primary key,
  unschedulable boolean not null,
  memory_pressure boolean not null,
  disk_pressure boolean not null,
  ready boolean not null,
  available_cpu_capacity integer not null
);

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

create table node_label
(
  node_name varchar(100) not null,
  label_key varchar(100) not null,
  label_value varchar(100) not null
);

create table pod_node_selector
(
  pod_name varchar(100) not null,
  label_key varchar(100) not null,
  label_value varchar(100) not null
);

-- Candidate nodes for each pod with node affinity: the nodes carrying one
-- of the labels the pod asks for. Input columns only: the database
-- evaluates it.
create view candidate_nodes_for_pods as
select pod_node_selector.pod_name as pod_name, node_label.node_name as node_name
from pod_node_selector
join node_label
  on pod_node_selector.label_key = node_label.label_key
 and pod_node_selector.label_value = node_label.label_value;

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

create view spare_capacity_per_node as
select (node.available_cpu_capacity
        - sum(pending_pod.cpu_request)) as cpu_spare
from node
join pending_pod
  on pending_pod.node_name = node.name
group by node.name;

-- @soft_constraint
create view constraint_load_balance_cpu as
select min(cpu_spare) from spare_capacity_per_node;

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
