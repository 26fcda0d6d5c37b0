-- A small scheduler policy for the explanation tests.
create table node (
  name varchar(10) not null primary key,
  cpu integer not null,
  unschedulable boolean not null
);

create table node_label (
  node varchar(10) not null,
  k varchar(10) not null,
  v varchar(10) not null
);

-- @variable_columns (node)
create table pod (
  name varchar(10) not null primary key,
  app varchar(10) not null,
  cpu integer not null,
  node varchar(10) references node(name)
);

create table pod_selector (
  pod varchar(10) not null,
  k varchar(10) not null,
  v varchar(10) not null
);

-- pod must share a node with every pod of app
create table pod_affinity (
  pod varchar(10) not null,
  app varchar(10) not null
);

-- pod must not share a node with any pod of app
create table pod_anti_affinity (
  pod varchar(10) not null,
  app varchar(10) not null
);

-- @hard_constraint
create view capacity as
select node.name from node join pod on pod.node = node.name
group by node.name
having sum(pod.cpu) <= node.cpu;

-- @hard_constraint
create view schedulable as
select * from pod join node on pod.node = node.name
where node.unschedulable = false;

create view selector_nodes as
select pod_selector.pod as pod, node_label.node as node
from pod_selector join node_label
  on pod_selector.k = node_label.k and pod_selector.v = node_label.v;

-- @hard_constraint
create view node_selector as
select * from pod
where pod.name not in (select pod from pod_selector)
   or pod.node in (select node from selector_nodes where selector_nodes.pod = pod.name);

-- @hard_constraint
create view affinity as
select * from pod_affinity
join pod p on p.name = pod_affinity.pod
join pod q on q.app = pod_affinity.app
where p.node = q.node;

-- @hard_constraint
create view anti_affinity as
select * from pod_anti_affinity
join pod p on p.name = pod_anti_affinity.pod
join pod q on q.app = pod_anti_affinity.app
where p.name = q.name or p.node <> q.node;
