-- vars: node nullable
-- fk: yes
-- Subqueries two levels in are evaluated once per combination of the rows
-- they read, at every level: the inner IN of zone_load reads only the node
-- row two levels out (one set per node, shared by every pod); the one of
-- roomy_zone_pods reads the pod row one level out too (a set per node and
-- pod: sharing it across pods would be wrong).
create view zone_load as
select n.name, n.zone,
  (select count(*) from pod q
   where q.node in (select m.name from node m where m.zone = n.zone)) as added
from node n;

-- @hard_constraint
create view zone_cap as
select * from zone_load where zone_load.added <= 2;

create view roomy_zone_pods as
select n.name,
  (select count(*) from pod q
   where q.node in (select m.name from node m where m.zone = n.zone and m.cpu >= q.cpu + q.prio)) as fits
from node n;

-- @soft_constraint
create view roomy as
select 5 * sum(r.fits) from roomy_zone_pods r;

-- @soft_constraint
create view placed as
select 3 * count(*) from pod where pod.node is not null;
