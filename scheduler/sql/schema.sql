-- The cluster state of the Kubernetes scheduler (paper §3: nodes, pods,
-- labels, taints, affinity terms, volumes and images), shared by the
-- placement and the preemption model. Resources are integers: CPU in
-- millicores, memory and storage in MiB.

create table node (
  name varchar(253) not null primary key,
  zone varchar(100) not null,              -- topology.kubernetes.io/zone ('' if none)
  cpu_allocatable integer not null,
  memory_allocatable integer not null,
  storage_allocatable integer not null,
  pods_allocatable integer not null,
  unschedulable boolean not null,
  ready boolean not null,
  network_unavailable boolean not null,
  memory_pressure boolean not null,
  disk_pressure boolean not null,
  pid_pressure boolean not null,
  sample_key integer not null              -- the node's place on the ring node_sample cuts (a hash of its name)
);
create index node_sample_key on node (sample_key);
-- The largest node's allocatable (N4's roomiest_node) by an index search,
-- not a scan of every node twice a batch.
create index node_cpu_allocatable on node (cpu_allocatable);
create index node_memory_allocatable on node (memory_allocatable);

-- The arc [lo, hi) of the ring of sample keys (0 to 1,048,575) whose
-- nodes a solve may place pods on; past the ring's end when lo > hi. One
-- row. A placement batch on a large cluster considers the nodes of one arc
-- (Config.NodeSample), as kube-scheduler scores a share of the nodes
-- (percentageOfNodesToScore); otherwise the arc is the whole ring.
create table node_sample (
  lo integer not null,
  hi integer not null
);

-- The nodes outside the arc that the batch's pods need: the node a pod
-- names, the nodes next to the pods a required affinity term selects.
create table node_sample_node (
  node_name varchar(253) not null primary key
);

-- Every label of a node; kubernetes.io/hostname is always present, so a
-- topology key names a label and a topology domain is one of its values.
create table node_label (
  node_name varchar(253) not null,
  label_key varchar(253) not null,
  label_value varchar(253) not null,
  label_int bigint,                        -- the value as a base-10 int64 (node affinity Gt, Lt), if it is one
  value_id bigint not null,                -- the value's number among its key's values (writeNode): a domain's number (G2)
  primary key (node_name, label_key)
);
create index node_label_kv on node_label (label_key, label_value);
create index node_label_key_id on node_label (label_key, value_id);

create table node_taint (
  node_name varchar(253) not null,
  taint_key varchar(253) not null,
  taint_value varchar(253) not null,
  effect varchar(20) not null              -- NoSchedule, PreferNoSchedule, NoExecute
);
create index node_taint_node on node_taint (node_name);

-- status.declaredFeatures (NodeDeclaredFeatures).
create table node_feature (
  node_name varchar(253) not null,
  feature varchar(253) not null,
  primary key (node_name, feature)
);

create table node_image (
  node_name varchar(253) not null,
  image_name varchar(253) not null,
  size_mb integer not null
);
create index node_image_name on node_image (image_name);

-- Every pod the scheduler knows: pending (node_name null) and bound.
create table pod (
  name varchar(253) not null primary key,  -- namespace/name
  namespace varchar(253) not null,
  scheduler_name varchar(253) not null,
  phase varchar(20) not null,              -- Pending, Running, Succeeded, Failed
  node_name varchar(253),                  -- the node it is bound to
  requested_node varchar(253),             -- spec.nodeName
  cpu_request integer not null,
  memory_request integer not null,
  storage_request integer not null,
  cpu_limit integer not null,
  memory_limit integer not null,
  priority integer not null,
  group_name varchar(253) not null,        -- owning controller (replica group)
  service_name varchar(253),               -- service whose pods share a zone
  max_per_node integer,                    -- new policy: at most N of the group per node
  creation integer not null,               -- arrival order
  pod_group varchar(253)                   -- its PodGroup (spec.schedulingGroup.podGroupName), if any
);
create index pod_node on pod (node_name);
create index pod_group on pod (group_name);
create index pod_pod_group on pod (pod_group);

-- PodGroups (scheduling.k8s.io/v1beta1): gang all-or-nothing (min_count,
-- counting the bound members; 1 for a basic group) and one domain of
-- topology_key for every member (null: none). Policies G1 and G2.
create table podgroup (
  name varchar(253) not null primary key,
  min_count integer not null,
  topology_key varchar(253),
  disrupt_all integer not null             -- disruptionMode all: its bound pods are evicted together or not (G3)
);

-- The scalar resources a node offers (status.allocatable): extended
-- resources (nvidia.com/gpu, example.com/foo) and hugepages-<size>, each in
-- the integer unit the caller chose for it (weave-scheduler: a hugepage
-- size counts pages, an extended resource its units). A resource a node
-- does not list has allocatable 0.
create table node_resource (
  node_name varchar(253) not null,
  resource varchar(253) not null,
  allocatable integer not null,
  primary key (node_name, resource)
);

-- A pod's requests of scalar resources, as NodeResourcesFit counts them,
-- in node_resource's units; only positive requests have a row.
create table pod_resource (
  pod_name varchar(253) not null,
  resource varchar(253) not null,
  request integer not null,
  primary key (pod_name, resource)
);

create table pod_label (
  pod_name varchar(253) not null,
  label_key varchar(253) not null,
  label_value varchar(253) not null,
  primary key (pod_name, label_key)
);
create index pod_label_kv on pod_label (label_key, label_value);

-- spec.nodeSelector: every pair must be a label of the node.
create table pod_node_selector (
  pod_name varchar(253) not null,
  label_key varchar(253) not null,
  label_value varchar(253) not null
);

-- Node affinity requirements: a required term matches when all its rows
-- hold (In and NotIn list one row per value); the pod needs one matching
-- term. Preferred terms (required = false) add their weight when matched.
-- Operators: In, NotIn, Exists, DoesNotExist and Gt, Lt (value_int against
-- node_label.label_int) over labels; FieldIn, FieldNotIn over the node's
-- name (matchFields on metadata.name); Never for a term Kubernetes cannot
-- parse, which matches no node. An empty term matches no node either and
-- has no row; a selector whose required terms are all such gets one Never
-- row. A pod has its own node selector (required and preferred terms,
-- selector 0) and one per volume constraint (required, selector 1, 2, ...).
create table pod_node_affinity (
  pod_name varchar(253) not null,
  selector integer not null,               -- 0: the pod's own; 1, 2, ...: those of its volumes (H17)
  required boolean not null,
  term integer not null,
  weight integer not null,
  requirement integer not null,            -- its place in the term (the rows of one In share it)
  label_key varchar(253) not null,
  operator varchar(20) not null,
  label_value varchar(253) not null,
  value_int bigint,                        -- Gt, Lt: the value as an int64
  term_key varchar(64) not null            -- the term's requirements, hashed (equal terms share it)
);
create index pod_node_affinity_pod on pod_node_affinity (pod_name, term);
create index pod_node_affinity_key on pod_node_affinity (term_key, label_key, label_value);

create table pod_toleration (
  pod_name varchar(253) not null,
  toleration_key varchar(253) not null,    -- '' with Exists tolerates everything
  operator varchar(20) not null,           -- Equal, Exists
  toleration_value varchar(253) not null,
  effect varchar(20) not null              -- '' matches every effect
);
create index pod_toleration_pod on pod_toleration (pod_name);

-- Which pods each selector of the state selects: a term's label selector
-- over the namespaces it covers, the conjunction of a pod's required
-- affinity terms, a spread constraint's selector in the pod's namespace
-- (selector.go). The scheduler keeps it as pods, their terms and the
-- namespaces' labels change: no policy evaluates a selector. The replicas
-- of a deployment share their keys.
create table pod_match (
  match_key varchar(64) not null,
  pod_name varchar(253) not null,
  primary key (match_key, pod_name)
);
create index pod_match_pod on pod_match (pod_name);

-- Inter-pod (anti-)affinity terms: the pods pod_match holds under
-- match_key within the topology domain of topology_key. A required
-- affinity term's match_key selects the pods that match every required
-- affinity term of the pod (InterPodAffinity counts a pod for a term only
-- then); an anti-affinity or preferred term's, the pods the term selects.
-- An anti-affinity term's namespace selector is matched against the labels
-- of a pod's namespace (match_key: as a bound pod's term), and against the
-- namespaces that exist for the pod being placed (incoming_key; the two
-- differ only for a namespace without a Namespace object).
create table pod_affinity_term (
  pod_name varchar(253) not null,
  anti boolean not null,
  required boolean not null,
  weight integer not null,
  match_key varchar(64) not null,
  incoming_key varchar(64) not null,
  topology_key varchar(253) not null
);
create index pod_affinity_term_pod on pod_affinity_term (pod_name, match_key, topology_key);
create index pod_affinity_term_key on pod_affinity_term (match_key);

-- spec.topologySpreadConstraints. With max_skew > 0, PodTopologySpread's:
-- match_key selects the pods counted (pod_match: the selector's, in the
-- pod's namespace, not terminating); spread_key names what is counted where
-- (selector.go's spreadKey: the pods, the topology key, the nodes counted,
-- max_skew, min_domains, counted and self_match), shared by the replicas;
-- counted: the pod counts itself once placed; self_match: the selector
-- selects it. max_skew 0 is weave's own even spreading of the pod's group
-- (N2; match_key and spread_key are empty).
create table pod_spread_constraint (
  pod_name varchar(253) not null,
  topology_key varchar(253) not null,
  max_skew integer not null,
  hard boolean not null,                   -- DoNotSchedule (true), ScheduleAnyway
  min_domains integer not null,
  match_key varchar(64) not null,
  spread_key varchar(64) not null,
  counted boolean not null,
  self_match boolean not null,
  node_affinity_policy varchar(10) not null, -- Honor, Ignore
  node_taints_policy varchar(10) not null    -- Honor, Ignore
);
create index pod_spread_constraint_pod on pod_spread_constraint (pod_name, spread_key);
create index pod_spread_constraint_key on pod_spread_constraint (spread_key);

create table pod_host_port (
  pod_name varchar(253) not null,
  protocol varchar(10) not null,           -- TCP when unset
  port integer not null,
  host_ip varchar(64) not null             -- 0.0.0.0 (every address) when unset
);
create index pod_host_port_pod on pod_host_port (pod_name);

create table volume (
  name varchar(253) not null primary key,
  zone varchar(100) not null               -- '' when not zonal
);

create table pod_volume (
  pod_name varchar(253) not null,
  volume_name varchar(253) not null
);

-- The node features a pod needs (NodeDeclaredFeatures).
create table pod_feature (
  pod_name varchar(253) not null,
  feature varchar(253) not null
);

create table pod_image (
  pod_name varchar(253) not null,
  image_name varchar(253) not null
);

-- The names of the pods a model decides (the rows of pending_pod). Views
-- that must run in the database read this table: a view reading
-- pending_pod, even only its input columns, is compiled into the model.
create table batch_pod (
  pod_name varchar(253) not null primary key,
  bound_node varchar(253)                  -- preemption: the node it may keep
);

-- The pods a model decides. The placement model loads the pending pods of
-- one batch; the preemption model adds the lower-priority bound pods it may
-- evict (bound_node set: they keep it or get none). Copied from pod.
-- @variable_columns (node_name nullable)
create table pending_pod (
  pod_name varchar(253) not null primary key,
  namespace varchar(253) not null,
  node_name varchar(253) references node(name),
  bound_node varchar(253),
  requested_node varchar(253),
  cpu_request integer not null,
  memory_request integer not null,
  storage_request integer not null,
  cpu_limit integer not null,
  memory_limit integer not null,
  priority integer not null,
  group_name varchar(253) not null,
  service_name varchar(253),
  max_per_node integer,
  place_weight bigint not null,            -- reward for placing it (priority-ranked)
  pod_group varchar(253)                   -- its PodGroup, if any
);

-- The PodDisruptionBudget that limits a victim's eviction and the
-- disruptions it allows now (Config.DisruptionBudget), for the victims of
-- a preemption plan that one selects: P3 evicts at most allowed of a
-- budget's victims.
create table victim_budget (
  pod_name varchar(253) not null primary key,
  budget varchar(253) not null,
  allowed integer not null
);

-- The sampled nodes: the arc's, and those the batch's pods need
-- (node_sample_node). Computed by the database. Each disjunct is one
-- range of node_sample_key (an arc past the ring's end is two) or a
-- primary-key lookup, so that SQLite reads them as a union of index
-- searches (MULTI-INDEX OR) and the sample costs its own size: written
-- with a nested OR it scanned every node, 1.3 ms at 10,000 nodes, and the
-- view is read four times a batch (itself, and as the set node, node_label
-- and node_free are read for).
create view sampled_node as
select n.name as node_name from node_sample s, node n
where (n.sample_key >= s.lo and n.sample_key < s.hi)
   or (n.sample_key >= s.lo and s.lo > s.hi)
   or (n.sample_key < s.hi and s.lo > s.hi)
   or n.name in (select e.node_name from node_sample_node e);

-- Pods are placed on the sampled nodes (or none). A hard constraint of the
-- form "x is null or x in (select ...)": weave makes it the domain of the
-- pod's node, so a model of a sampled batch has the sample's size.
-- @hard_constraint
create view node_sample_only as
select * from pending_pod
where pending_pod.node_name is null
   or pending_pod.node_name in (select sampled_node.node_name from sampled_node);

-- Pods holding resources on a node that the model does not decide.
create view bound_pod as
select pod.name, pod.namespace, pod.node_name, pod.group_name, pod.service_name, pod.pod_group,
       pod.cpu_request, pod.memory_request, pod.storage_request, pod.cpu_limit, pod.memory_limit
from pod
where pod.node_name is not null and (pod.phase = 'Pending' or pod.phase = 'Running')
  and pod.name not in (select batch_pod.pod_name from batch_pod);

-- What the bound pods (phase Pending or Running) of each node request,
-- one row per node that has any: kept by the scheduler as it writes pods
-- (usageRefresh, db.go, recomputes the row of every node a written pod was
-- or is on, from the pod table, in the same transaction), so that a batch
-- reads one row per node instead of summing every bound pod of the
-- sampled nodes, as node_free did, twice a batch with N4's roomiest_node:
-- with it a batch's reads at 500 nodes running 5,000 pods fell from 38 to
-- about 21 ms (BenchmarkBatchLatencyRunningPods, p50).
create table node_usage (
  node_name varchar(253) not null primary key,
  cpu_request integer not null,
  memory_request integer not null,
  storage_request integer not null,
  pods integer not null,
  cpu_limit integer not null,
  memory_limit integer not null
);

-- node_usage's scalar resources (extended resources, hugepages): per node
-- and resource, what its bound pods request; kept by usageRefresh too.
create table node_resource_usage (
  node_name varchar(253) not null,
  resource varchar(253) not null,
  request integer not null,
  primary key (node_name, resource)
);

-- The bound pods the model decides again (a preemption model's candidate
-- victims), per node: node_usage counts them, node_free gives them back.
create view batch_bound_usage as
select p.node_name, sum(p.cpu_request) as cpu_request, sum(p.memory_request) as memory_request,
  sum(p.storage_request) as storage_request, count(*) as pods,
  sum(p.cpu_limit) as cpu_limit, sum(p.memory_limit) as memory_limit
from batch_pod b join pod p on p.name = b.pod_name
where p.node_name is not null and (p.phase = 'Pending' or p.phase = 'Running')
group by p.node_name;

-- Their scalar resources, per node and resource.
create view batch_bound_resource as
select p.node_name, r.resource, sum(r.request) as request
from batch_pod b join pod p on p.name = b.pod_name join pod_resource r on r.pod_name = p.name
where p.node_name is not null and (p.phase = 'Pending' or p.phase = 'Running')
group by p.node_name, r.resource;

-- What is left of each node after the bound pods (bound_pod's, from
-- node_usage): per-node rows, computed by the database, are all the
-- placement model reads of them. Only the sampled nodes': node_sample_only
-- keeps pods off the others. In ring order: the model's nodes come in this
-- order, and the search's first choices follow it (in name order, seed 20
-- of the placement-quality benchmark left a pod out).
create view node_free as
select node.name as node_name,
  node.cpu_allocatable - coalesce(u.cpu_request, 0) + coalesce(r.cpu_request, 0) as cpu_free,
  node.memory_allocatable - coalesce(u.memory_request, 0) + coalesce(r.memory_request, 0) as memory_free,
  node.storage_allocatable - coalesce(u.storage_request, 0) + coalesce(r.storage_request, 0) as storage_free,
  node.pods_allocatable - coalesce(u.pods, 0) + coalesce(r.pods, 0) as pods_free,
  node.cpu_allocatable - coalesce(u.cpu_limit, 0) + coalesce(r.cpu_limit, 0) as cpu_limit_free,
  node.memory_allocatable - coalesce(u.memory_limit, 0) + coalesce(r.memory_limit, 0) as memory_limit_free
from node left join node_usage u on u.node_name = node.name
left join batch_bound_usage r on r.node_name = node.name
where node.name in (select sn.node_name from sampled_node sn)
order by node.sample_key, node.name;

-- The scalar-resource requests of the pods a model decides.
create view batch_pod_resource as
select r.pod_name, r.resource, r.request
from pod_resource r join batch_pod on batch_pod.pod_name = r.pod_name;

-- (sampled node, resource) for the scalar resources the decided pods
-- request: what the bound pods leave of the node's allocatable, or 0 when
-- they use all of it or more (NodeResourcesFit checks a resource only for
-- a pod that requests it, so room below 0 and room 0 turn the same pods
-- away). Empty, and read at no cost, when no decided pod requests one.
-- The resources come first, by a left join that SQLite may not reorder:
-- as an inner join it read the sampled nodes first and ran the batch's
-- distinct resources again for each (35 ms a read at 500 nodes, 4 ms
-- this way). The bound pods' requests come from node_resource_usage.
create view node_resource_free as
select u.node_name, u.resource, case when u.free > 0 then u.free else 0 end as free
from (select n.name as node_name, br.resource,
        coalesce(a.allocatable, 0) - coalesce(ru.request, 0) + coalesce(bb.request, 0) as free
      from (select distinct resource from batch_pod_resource) br
      left join node n on n.name in (select sn.node_name from sampled_node sn)
      left join node_resource a on a.node_name = n.name and a.resource = br.resource
      left join node_resource_usage ru on ru.node_name = n.name and ru.resource = br.resource
      left join batch_bound_resource bb on bb.node_name = n.name and bb.resource = br.resource) u
where u.node_name is not null;

-- The required node-affinity terms of the pods a model decides (their
-- own, not their volumes').
create view batch_node_affinity_term as
select distinct t.pod_name, t.term_key
from batch_pod b join pod_node_affinity t on t.pod_name = b.pod_name
where t.required = true and t.selector = 0;

-- The nodes node_affinity_unmet covers: the sample, or every node when a
-- batch pod's hard spread constraint honours node affinity.
create view node_affinity_node as
select sn.node_name as name from sampled_node sn
where not exists (select 1 from batch_pod b join pod_spread_constraint c on c.pod_name = b.pod_name
                  where c.hard = true and c.max_skew > 0 and c.node_affinity_policy = 'Honor')
union all
select n.name from node n
where exists (select 1 from batch_pod b join pod_spread_constraint c on c.pod_name = b.pod_name
              where c.hard = true and c.max_skew > 0 and c.node_affinity_policy = 'Honor');

-- (term, node) for the distinct required node-affinity terms of the pods
-- a model decides, when the term fails on the node (some requirement is
-- not met: labels.Requirement.Matches, and the field selector of
-- matchFields). Per term key, not per pod: the replicas of a deployment
-- share their terms, and per pod this was pods x nodes evaluations.
-- The sampled nodes only (H13, H17 read it for the nodes a batch may use),
-- unless a batch pod's hard spread constraint honours node affinity:
-- then its counted nodes (required_node_affinity_mismatch) are every
-- node. At 15,000 nodes every node was a third of a SchedulingNodeAffinity
-- batch (BenchmarkScaleWorkloads): 185 ms a read, 52 ms with the sample
-- tested on each node, less with node_affinity_node (below).
-- An In requirement's values are found by pod_node_affinity_key (term,
-- key, value): "requirement + 0" keeps SQLite off the index weave makes on
-- requirement alone, 0 for most rows, through which it read every pod's
-- rows of the term per (node, value): 250 ms a batch of 100 at 500 nodes
-- after 1,000 such pods, 57 ms this way (BenchmarkNodeAffinityBatch, p50).
create view node_affinity_unmet as
select distinct r.term_key, node.name as node_name
from (select distinct t.term_key, t.requirement, t.label_key, t.operator, t.label_value, t.value_int
      from batch_pod b join pod_node_affinity t on t.pod_name = b.pod_name
      where t.required = true) r, node_affinity_node node
where case r.operator
    when 'Exists' then not exists (select 1 from node_label l where l.node_name = node.name and l.label_key = r.label_key)
    when 'DoesNotExist' then exists (select 1 from node_label l where l.node_name = node.name and l.label_key = r.label_key)
    when 'NotIn' then exists (select 1 from node_label l where l.node_name = node.name
                              and l.label_key = r.label_key and l.label_value = r.label_value)
    when 'Gt' then not exists (select 1 from node_label l where l.node_name = node.name
                               and l.label_key = r.label_key and l.label_int > r.value_int)
    when 'Lt' then not exists (select 1 from node_label l where l.node_name = node.name
                               and l.label_key = r.label_key and l.label_int < r.value_int)
    when 'FieldIn' then node.name <> r.label_value
    when 'FieldNotIn' then node.name = r.label_value
    when 'In' then not exists (select 1 from node_label l where l.node_name = node.name and l.label_key = r.label_key
                     and exists (select 1 from pod_node_affinity v
                                 where v.term_key = r.term_key and v.label_key = r.label_key
                                   and v.label_value = l.label_value and v.requirement + 0 = r.requirement
                                   and v.operator = 'In' and v.required = true))
    else true
  end;

-- The host ports of the pods a model decides.
create view batch_host_port as
select hp.pod_name, hp.protocol, hp.port, hp.host_ip
from pod_host_port hp join batch_pod on batch_pod.pod_name = hp.pod_name;

-- The rows of pod_match of the pods a model decides, and their hard
-- PodTopologySpread constraints: what the model reads of those tables,
-- which hold every pod's.
create view batch_pod_match as
select m.match_key, m.pod_name
from pod_match m join batch_pod b on b.pod_name = m.pod_name;

create view batch_spread_constraint as
select c.pod_name, c.spread_key
from pod_spread_constraint c join batch_pod b on b.pod_name = c.pod_name
where c.hard = true and c.max_skew > 0;

-- Required inter-pod (anti-)affinity terms of the pods a model decides:
-- match_key as a bound pod reads them (anti-affinity within the batch),
-- incoming_key as the pod being placed does (against bound pods).
create view batch_affinity_term as
select t.pod_name, t.anti, t.match_key, t.incoming_key, t.topology_key
from pod_affinity_term t
join batch_pod on batch_pod.pod_name = t.pod_name
where t.required = true;

-- (match key, topology key, node) when the node's topology domain holds a
-- bound pod the key selects, for the keys of the batch's required terms.
-- Per key, not per term: the replicas of a deployment share theirs, and
-- per term it was (pods × nodes) rows (50,000 for 100 affine pods on 500
-- nodes) that the database wrote and the grounder read again for every
-- pod. Both sides are derived tables so that SQLite, which has no
-- statistics, reads the batch's terms first and not every term of the
-- cluster per domain. No duplicates: a node has one value per label key,
-- so distinct domains give distinct nodes.
create view term_domain_match as
select o.match_key, o.topology_key, dn.node_name
from (select distinct s.match_key, s.topology_key, dq.label_value as domain
      from (select distinct incoming_key as match_key, topology_key from batch_affinity_term) s
      join pod_match m on m.match_key = s.match_key
      join bound_pod q on q.name = m.pod_name
      join node_label dq on dq.node_name = q.node_name and dq.label_key = s.topology_key) o
join node_label dn on dn.label_key = o.topology_key and dn.label_value = o.domain;

-- The pods of the batch whose required anti-affinity term selects
-- themselves (replicas kept apart), per term; a term a pod repeats counts
-- once (the hostname term's all_different would keep the pod from itself).
create view anti_affinity_group as
select distinct t.pod_name, t.match_key, t.topology_key
from batch_affinity_term t
join pod_match m on m.match_key = t.match_key and m.pod_name = t.pod_name
where t.anti = true;

-- The batch pods a self-selecting anti-affinity term (anti_affinity_group)
-- selects that do not hold it: they must keep away from its holders.
create view anti_affinity_target as
select m.match_key, t.topology_key, m.pod_name
from batch_pod b
join pod_match m on m.pod_name = b.pod_name
join (select distinct match_key, topology_key from anti_affinity_group) t on t.match_key = m.match_key
where not exists (select 1 from pod_affinity_term u where u.pod_name = m.pod_name and u.match_key = t.match_key
                  and u.topology_key = t.topology_key and u.anti = true and u.required = true);

-- Pairs of batch pods kept apart by a required anti-affinity term that is
-- not one of both: pod_a holds the term, pod_b is selected by it, and not
-- both hold it and are selected (anti_affinity_group): a holder the term
-- does not select with every batch pod it selects, and a holder it
-- selects with the targets (anti_affinity_target). Per domain of the
-- term's topology key but hostname: anti_affinity_pair_domain.
create view anti_affinity_pair as
select h.pod_name as pod_a, m.pod_name as pod_b, h.topology_key
from (select t.pod_name, t.match_key, t.topology_key from batch_affinity_term t
      where t.anti = true
        and not exists (select 1 from pod_match s where s.match_key = t.match_key and s.pod_name = t.pod_name)) h
join pod_match m on m.match_key = h.match_key
join batch_pod b on b.pod_name = m.pod_name
where m.pod_name <> h.pod_name
union
select g.pod_name, x.pod_name, g.topology_key
from anti_affinity_group g
join anti_affinity_target x on x.match_key = g.match_key and x.topology_key = g.topology_key
where g.match_key in (select match_key from anti_affinity_target);

create view anti_affinity_pair_domain as
select distinct p.pod_a, p.pod_b, l.label_key, l.label_value
from anti_affinity_pair p join node_label l on l.label_key = p.topology_key
where p.topology_key <> 'kubernetes.io/hostname';

-- Required affinity of the batch: one row per (pod, topology key) of its
-- terms; match_key selects the pods that match every term of the pod.
create view batch_affinity as
select distinct pod_name, match_key, topology_key from batch_affinity_term where anti = false;

-- Batch pods without required affinity terms that the keys select: they
-- may support a pod with the terms (bound before it).
create view affinity_anchor as
select distinct a.match_key, m.pod_name
from (select distinct match_key from batch_affinity) a
join pod_match m on m.match_key = a.match_key
join batch_pod b on b.pod_name = m.pod_name
where not exists (select 1 from batch_affinity x where x.pod_name = m.pod_name);

-- Keys that no bound pod matches and whose batch pods that match all have
-- the key: those pods may take the first-pod exemption.
create view affinity_first_peer as
select a.pod_name, a.match_key, a.topology_key
from batch_affinity a
join pod_match s on s.match_key = a.match_key and s.pod_name = a.pod_name
where a.match_key not in (select d.match_key from term_domain_match d)
  and a.match_key not in (select m.match_key from pod_match m join batch_pod b on b.pod_name = m.pod_name
                          where not exists (select 1 from pod_affinity_term x where x.pod_name = m.pod_name
                                            and x.match_key = m.match_key and x.required = true and x.anti = false));

-- Topology domains for weave's even spreading (N2, max_skew 0) of the
-- groups of the pods a model decides: (group, topology key, domain) over
-- the domains of ready, schedulable nodes, with the group's bound pods
-- there, its size and the number of domains. The batch's (group, key)
-- pairs are found first: a join of every batch pod with every node's
-- label, grouped afterwards, took 70 ms per 100-pod batch on 500 nodes.
-- The domains, the bound counts and the domain counts are each one grouped
-- pass over the labels of the batch's keys only: as subqueries per (group,
-- domain) they read every bound pod of the group once per domain, and
-- every node label (hostnames included) for the domains, 3.6 ms per
-- batch at 500 nodes.
create view even_spread_key as
select distinct c.topology_key
from batch_pod join pod_spread_constraint c on c.pod_name = batch_pod.pod_name
where c.hard = true and c.max_skew = 0;

create view even_spread_domain as
select s.group_name, s.topology_key, d.domain,
  coalesce(b.bound, 0) as bound,
  (select count(*) from pod g where g.group_name = s.group_name and (g.phase = 'Pending' or g.phase = 'Running')) as group_size,
  k.domains
from (select distinct p.group_name, c.topology_key
      from batch_pod join pod p on p.name = batch_pod.pod_name
      join pod_spread_constraint c on c.pod_name = p.name
      where c.hard = true and c.max_skew = 0) s
join (select distinct dl.label_key, dl.label_value as domain
      from node_label dl join node n on n.name = dl.node_name
      where n.ready = true and n.unschedulable = false
        and dl.label_key in (select topology_key from even_spread_key)) d on d.label_key = s.topology_key
join (select dl.label_key, count(distinct dl.label_value) as domains
      from node_label dl join node n on n.name = dl.node_name
      where n.ready = true and n.unschedulable = false
        and dl.label_key in (select topology_key from even_spread_key)
      group by dl.label_key) k on k.label_key = s.topology_key
left join (select b.group_name, bl.label_key, bl.label_value, count(*) as bound
           from bound_pod b join node_label bl on bl.node_name = b.node_name
           where bl.label_key in (select topology_key from even_spread_key)
             and b.group_name in (select p.group_name from batch_pod join pod p on p.name = batch_pod.pod_name)
           group by b.group_name, bl.label_key, bl.label_value) b
  on b.group_name = s.group_name and b.label_key = s.topology_key and b.label_value = d.domain;

-- Pods of each evenly spread group per domain once the decided pods are
-- placed: bound before, added by the model.
create view even_spread_count as
select s.group_name, s.topology_key, s.domain, s.group_size, s.domains, s.bound,
  (select count(*) from pending_pod q
   where q.group_name = s.group_name
     and q.node_name in (select l.node_name from node_label l
                         where l.label_key = s.topology_key and l.label_value = s.domain)) as added
from even_spread_domain s;

-- PodTopologySpread (N3): the batch's hard constraints, one row per spread
-- key (the replicas of a deployment share theirs) with a pod that has it.
create view topology_spread_key as
select c.spread_key, c.match_key, c.topology_key, c.max_skew, c.min_domains,
  case when c.counted then 1 else 0 end as counted, case when c.self_match then 1 else 0 end as self_match,
  c.node_affinity_policy, c.node_taints_policy, min(c.pod_name) as pod_name
from batch_pod b join pod_spread_constraint c on c.pod_name = b.pod_name
where c.hard = true and c.max_skew > 0
group by c.spread_key, c.match_key, c.topology_key, c.max_skew, c.min_domains, c.counted, c.self_match,
  c.node_affinity_policy, c.node_taints_policy;

-- (pod, node) when the pod's spec.nodeSelector or its required
-- node-affinity terms rule the node out (NodeAffinity's
-- RequiredNodeAffinity.Match), for the pods of topology_spread_key whose
-- constraints honour node affinity (nodeAffinityPolicy Honor, the default).
create view required_node_affinity_mismatch as
select k.pod_name, node.name as node_name
from (select distinct pod_name from topology_spread_key where node_affinity_policy = 'Honor') k, node
where exists (select 1 from pod_node_selector s where s.pod_name = k.pod_name
              and not exists (select 1 from node_label l where l.node_name = node.name
                              and l.label_key = s.label_key and l.label_value = s.label_value))
   or (exists (select 1 from batch_node_affinity_term t where t.pod_name = k.pod_name)
       and not exists (select 1 from batch_node_affinity_term t where t.pod_name = k.pod_name
                       and not exists (select 1 from node_affinity_unmet u
                                       where u.term_key = t.term_key and u.node_name = node.name)));

-- (pod, node) when the node has a NoSchedule or NoExecute taint the pod
-- does not tolerate (TaintToleration's DoNotScheduleTaintsFilterFunc), for
-- the pods of topology_spread_key whose constraints honour taints
-- (nodeTaintsPolicy Honor; Ignore is the default).
create view untolerated_do_not_schedule_taint as
select distinct k.pod_name, t.node_name
from (select distinct pod_name from topology_spread_key where node_taints_policy = 'Honor') k, node_taint t
where (t.effect = 'NoSchedule' or t.effect = 'NoExecute')
  and not exists (select 1 from pod_toleration o
    where o.pod_name = k.pod_name and (o.effect = '' or o.effect = t.effect)
      and ((o.toleration_key = '' and o.operator = 'Exists')
        or (o.toleration_key = t.taint_key and (o.operator = 'Exists' or o.toleration_value = t.taint_value))));

-- The nodes each spread key counts pods on, with their domain: they carry
-- every topology key of the pod's hard constraints and pass the
-- node-inclusion policies of this constraint (PodTopologySpread's
-- calPreFilterState, matchNodeInclusionPolicies per constraint). The two
-- mismatch views hold a pod if any of its constraints honours the policy,
-- so each is read only for a key whose own policy is Honor: a pod's other
-- constraint must not narrow this one's nodes. Every node, ready or not,
-- as kube-scheduler's snapshot has them.
create view topology_spread_node as
select k.spread_key, l.node_name, l.label_value as domain
from topology_spread_key k
join node_label l on l.label_key = k.topology_key
where not exists (select 1 from pod_spread_constraint o where o.pod_name = k.pod_name and o.hard = true and o.max_skew > 0
                  and not exists (select 1 from node_label x where x.node_name = l.node_name and x.label_key = o.topology_key))
  and (k.node_affinity_policy <> 'Honor'
       or not exists (select 1 from required_node_affinity_mismatch m where m.pod_name = k.pod_name and m.node_name = l.node_name))
  and (k.node_taints_policy <> 'Honor'
       or not exists (select 1 from untolerated_do_not_schedule_taint u where u.pod_name = k.pod_name and u.node_name = l.node_name));

-- The nodes of topology_spread_node that the batch may use (the sample):
-- all the model reads of it, to count where it places pods; the bound
-- pods' counts read it whole in the database. Read whole by the model it
-- was every labelled node: 15,000 rows a TopologySpreading batch at 15,000
-- nodes, 0.4 s of grounding (BenchmarkScaleWorkloads).
create view topology_spread_sampled_node as
select s.spread_key, s.node_name, s.domain from topology_spread_node s
where s.node_name in (select sn.node_name from sampled_node sn);

-- Spread keys whose pods can be bound in an order that keeps each within
-- its skew whenever the final counts are (n3_topology_spread): every batch
-- pod the key counts has this constraint as its only hard one (of
-- PodTopologySpread) and no required affinity term, and every batch pod
-- with the key is counted by it.
--
-- A pod's constraint is found by pod_spread_constraint_pod (pod, key), not
-- by the index weave makes on spread_key, which every replica shares, and
-- the pods the key counts are looked up by pod_match's key, not listed
-- again per pod. Both were read once per batch pod and bound replica:
-- 600 ms to 1 s a batch of 100 at 500 nodes holding 1,000 replicas
-- (TopologySpreading of BenchmarkScaleWorkloads), a few ms this way.
create view topology_spread_ordered as
select k.spread_key from topology_spread_key k
where not exists (select 1 from pod_match m join batch_pod b on b.pod_name = m.pod_name
                  where m.match_key = k.match_key
                    and (not exists (select 1 from pod_spread_constraint c where c.pod_name = m.pod_name
                                     and c.spread_key = k.spread_key and c.hard = true)
                         or exists (select 1 from pod_spread_constraint c where c.pod_name = m.pod_name
                                    and c.hard = true and c.max_skew > 0 and c.spread_key <> k.spread_key)
                         or exists (select 1 from pod_affinity_term t where t.pod_name = m.pod_name
                                    and t.required = true and t.anti = false)))
  and not exists (select 1 from batch_pod b join pod_spread_constraint c on c.pod_name = b.pod_name
                  where c.spread_key = k.spread_key and c.hard = true
                    and not exists (select 1 from pod_match m where m.match_key = k.match_key and m.pod_name = c.pod_name));

-- Spread keys that count on every node carrying their topology key: the
-- pod's hard constraints all have this topology key, node affinity is not
-- honoured or the pod has none to honour (no nodeSelector, no required
-- term: required_node_affinity_mismatch is empty for it), taints are not
-- honoured. The replicas of a deployment spread over zones are one.
create view topology_spread_plain_key as
select k.spread_key, k.match_key, k.topology_key
from topology_spread_key k
where not exists (select 1 from pod_spread_constraint o where o.pod_name = k.pod_name and o.hard = true and o.max_skew > 0
                  and o.topology_key <> k.topology_key)
  and (k.node_affinity_policy <> 'Honor'
       or (not exists (select 1 from pod_node_selector s where s.pod_name = k.pod_name)
           and not exists (select 1 from batch_node_affinity_term t where t.pod_name = k.pod_name)))
  and k.node_taints_policy <> 'Honor';

-- The bound pods each spread key counts per domain. A plain key's domains
-- are its topology key's values and its pods are found from the pods it
-- selects (pod_match), not from every node: topology_spread_node is every
-- labelled node checked against the inclusion policies, and counting the
-- bound pods from it cost 0.2-0.4 s a batch at 15,000 nodes, twice
-- (topology_spread_domain; TopologySpreading of BenchmarkScaleWorkloads).
create view topology_spread_bound as
select k.spread_key, d.label_value as domain, coalesce(c.bound, 0) as bound
from topology_spread_plain_key k
join (select distinct l.label_key, l.label_value from node_label l
      where l.label_key in (select p.topology_key from topology_spread_plain_key p)) d
  on d.label_key = k.topology_key
left join (select p.spread_key, l.label_value, count(*) as bound
           from topology_spread_plain_key p
           join pod_match m on m.match_key = p.match_key
           join bound_pod b on b.name = m.pod_name
           join node_label l on l.node_name = b.node_name and l.label_key = p.topology_key
           group by p.spread_key, l.label_value) c
  on c.spread_key = k.spread_key and c.label_value = d.label_value
union all
select s.spread_key, s.domain, count(m.pod_name) as bound
from topology_spread_node s
join topology_spread_key k on k.spread_key = s.spread_key
left join bound_pod b on b.node_name = s.node_name
left join pod_match m on m.pod_name = b.name and m.match_key = k.match_key
where s.spread_key not in (select p.spread_key from topology_spread_plain_key p)
group by s.spread_key, s.domain;

-- Per spread key and domain: the bound pods counted there, the least such
-- count over the key's domains, the number of domains, and whether the
-- key's pods can be ordered (topology_spread_ordered).
create view topology_spread_domain as
select d.spread_key, d.domain, d.bound, k.match_key, k.max_skew, k.min_domains, k.counted, k.self_match,
  a.domains, a.bound_min,
  case when d.spread_key in (select spread_key from topology_spread_ordered) then 1 else 0 end as ordered
from topology_spread_bound d
join topology_spread_key k on k.spread_key = d.spread_key
join (select spread_key, count(*) as domains, min(bound) as bound_min from topology_spread_bound group by spread_key) a
  on a.spread_key = d.spread_key;

-- Per spread key and domain once the decided pods are placed: the pods
-- counted (bound, and placed by the model on the domain's counted nodes),
-- and the pods with the key placed there.
create view topology_spread_count as
select d.spread_key, d.domain, d.max_skew, d.min_domains, d.counted, d.self_match, d.domains, d.bound_min, d.ordered,
  d.bound + (select count(*) from pending_pod q
             where q.pod_name in (select m.pod_name from batch_pod_match m where m.match_key = d.match_key)
               and q.node_name in (select s.node_name from topology_spread_sampled_node s
                                   where s.spread_key = d.spread_key and s.domain = d.domain)) as pods,
  (select count(*) from pending_pod q
   where q.pod_name in (select c.pod_name from batch_spread_constraint c where c.spread_key = d.spread_key)
     and q.node_name in (select s.node_name from topology_spread_sampled_node s
                         where s.spread_key = d.spread_key and s.domain = d.domain)) as holders
from topology_spread_domain d;

-- Bound pods of the groups of the pods a model decides, per node.
create view group_node_load as
select b.group_name, b.node_name, count(*) as pods
from bound_pod b
where b.group_name in (select p.group_name from pod p join batch_pod on batch_pod.pod_name = p.name)
group by b.group_name, b.node_name;

-- Per node that receives pods, what is left once they are placed.
create view node_load as
select node_free.node_name,
  node_free.cpu_free - sum(pending_pod.cpu_request) as cpu_spare,
  node_free.memory_free - sum(pending_pod.memory_request) as memory_spare,
  node_free.pods_free - count(*) as pods_spare,
  node_free.cpu_limit_free - sum(pending_pod.cpu_limit) as cpu_limit_spare,
  node_free.memory_limit_free - sum(pending_pod.memory_limit) as memory_limit_spare
from node_free join pending_pod on pending_pod.node_name = node_free.node_name
group by node_free.node_name, node_free.cpu_free, node_free.memory_free, node_free.pods_free,
         node_free.cpu_limit_free, node_free.memory_limit_free;

-- PodGroups of the pods a model decides (G1): how many more members than
-- those bound the group needs placed, if any is placed (min_count minus
-- the bound members; 0 or less: no bound). Groups of the preemptors only:
-- a victim (bound_node set) is not a member to place, and a group of
-- victims is held by G3 (disruptionMode), not by minCount.
create view gang_need as
select g.name as pod_group, g.min_count - (select count(*) from bound_pod b where b.pod_group = g.name) as need
from podgroup g
where g.name in (select p.pod_group from batch_pod join pod p on p.name = batch_pod.pod_name
                 where batch_pod.bound_node is null);

-- The disruptionMode-all groups with a victim in the model (preemption),
-- and their live bound pods, victims or not (G3).
create view gang_disrupt_all as
select g.name as pod_group,
       (select count(*) from pod b
        where b.pod_group = g.name and b.node_name is not null
          and (b.phase = 'Pending' or b.phase = 'Running')) as members
from podgroup g
where g.disrupt_all = 1
  and g.name in (select p.pod_group from batch_pod join pod p on p.name = batch_pod.pod_name
                 where batch_pod.bound_node is not null);

-- PodGroups of the pods a model decides with a topology key (G2), the
-- domains of their bound members (as bound_pod has them), and the nodes
-- each may not use: those without the label, and, once a member is bound,
-- those of another domain (of the sampled nodes: the pods go nowhere
-- else). The bound members' domains come first: per (group, node) the
-- group's bound pods were read once per node, 1 s a batch once 500 nodes
-- ran 3,500 pods.
create view gang_topology as
select g.name as pod_group, g.topology_key
from podgroup g
where g.topology_key is not null
  and g.name in (select p.pod_group from batch_pod join pod p on p.name = batch_pod.pod_name
                 where batch_pod.bound_node is null);

create view gang_bound_domain as
select distinct t.pod_group, t.topology_key, bl.label_value as domain
from gang_topology t
join pod b on b.pod_group = t.pod_group
join node_label bl on bl.node_name = b.node_name and bl.label_key = t.topology_key
where b.node_name is not null and (b.phase = 'Pending' or b.phase = 'Running')
  and b.name not in (select batch_pod.pod_name from batch_pod);

create view gang_topology_conflict as
select t.pod_group, n.name as node_name
from gang_topology t, node n
where n.name in (select sn.node_name from sampled_node sn)
  and not exists (select 1 from node_label l where l.node_name = n.name and l.label_key = t.topology_key)
union
select d.pod_group, l.node_name
from gang_bound_domain d join node_label l on l.label_key = d.topology_key and l.label_value <> d.domain
where l.node_name in (select sn.node_name from sampled_node sn);

-- (group, node, domain number) for the groups of gang_topology and the
-- sampled nodes carrying their key: the number of the domain a member
-- placed there would be in (G2), the label value's number (value_id,
-- written with the label: the same for a key's equal values, distinct
-- for different ones). Ranking the key's distinct values here instead
-- cost 1.5 ms a read at 500 nodes in 50 racks (a self-join of the
-- values), two fifths of the read (2026-11-28). Only the sampled nodes'
-- rows: the batch's pods go nowhere else (node_sample_only), and a batch
-- of PodGroups samples whole domains (domainArc, sample.go), so every
-- node of a domain the model may use is there.
create view gang_node_domain as
select t.pod_group, l.node_name, l.value_id as domain_id
from gang_topology t
join node_label l on l.label_key = t.topology_key
where l.node_name in (select sn.node_name from sampled_node sn);

-- N5 (n5_whole_domains.sql): the scalar-resource requests of the batch's
-- pods of PodGroups, the topology keys of the known PodGroups, and per
-- domain of those keys and resource the room the bound pods leave.
create view whole_domain_request as
select r.pod_name, r.resource, r.request
from batch_pod_resource r join pod p on p.name = r.pod_name
where p.pod_group is not null;

create view whole_domain_key as
select distinct g.topology_key as label_key from podgroup g
where g.topology_key is not null
  and exists (select 1 from whole_domain_request);

-- (key, domain, resource): the domain's allocatable, and what the bound
-- pods on its nodes request (integer sums of integer columns: PostgreSQL
-- sums bigints to numeric, whose division is not SQLite's).
create view whole_domain_allocatable as
select l.label_key, l.label_value, a.resource, sum(a.allocatable) as allocatable
from node_label l join node_resource a on a.node_name = l.node_name
where l.label_key in (select k.label_key from whole_domain_key k)
  and a.resource in (select q.resource from whole_domain_request q)
group by l.label_key, l.label_value, a.resource;

create view whole_domain_used as
select l.label_key, l.label_value, r.resource, sum(r.request) as used
from node_label l join bound_pod b on b.node_name = l.node_name
join pod_resource r on r.pod_name = b.name
where l.label_key in (select k.label_key from whole_domain_key k)
  and r.resource in (select q.resource from whole_domain_request q)
group by l.label_key, l.label_value, r.resource;

create view whole_domain_largest as
select a.resource, max(a.allocatable) as most
from node_resource a
where a.resource in (select q.resource from whole_domain_request q) and a.allocatable > 0
group by a.resource;

-- (node, key, resource) for each domain of the node: the domain's room
-- (at least 0) in percent of the largest domain's allocatable.
create view whole_domain_share as
select l.node_name, case when d.allocatable - coalesce(u.used, 0) > 0
                         then d.allocatable - coalesce(u.used, 0) else 0 end * 100 / z.most as share
from whole_domain_allocatable d
join (select e.label_key, e.resource, max(e.allocatable) as most
      from whole_domain_allocatable e group by e.label_key, e.resource) z
  on z.label_key = d.label_key and z.resource = d.resource
left join whole_domain_used u
  on u.label_key = d.label_key and u.label_value = d.label_value and u.resource = d.resource
join node_label l on l.label_key = d.label_key and l.label_value = d.label_value
where z.most > 0;
