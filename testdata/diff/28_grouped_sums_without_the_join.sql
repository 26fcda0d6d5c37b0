-- vars: node nullable
-- fk: yes
-- 27's sums grouped by stored columns of the decision table (G2's
-- gang_pod_domain shape): one group per pod, or per app, each present when
-- one of its pods is on a node the relation joins, its sums tables indexed
-- by the pods' nodes (decision_sum.go). A pod on no node, or on a node
-- the filters drop, makes no group; NULL weights are skipped.
create view node_weight as
select n.name, n.zone, case when n.ready then n.cpu end as w,
       case when n.zone = 'z0' then 'a0' else 'a1' end as app
from node n;

create view pod_weight as
select pod.app, sum(nw.w) as w, count(*) as n
from node_weight nw join pod on pod.node = nw.name
group by pod.name, pod.app;

-- @soft_constraint
create view placed as
select 6 * count(*) from pod where pod.node is not null;

-- A group per pod on a node of node_weight: counted, so a group that
-- should not exist shows.
-- @soft_constraint
create view weighted_per_pod as
select sum(pw.n) - 2 * sum(pw.w) - 5 * count(*) from pod_weight pw;

-- The pods of an app placed on ready nodes sit on nodes whose weights
-- differ by at most one.
-- @hard_constraint
create view close_weights_per_app as
select pw.app from pod_weight pw group by pw.app
having max(pw.w) is null or max(pw.w) - min(pw.w) <= 1;

-- Per app, the high-priority pods' weight is at most 7, in a zone's nodes
-- of the app's own name (a filter on stored values of both sides).
-- @hard_constraint
create view light_per_app as
select pod.app from node_weight nw
join pod on pod.node = nw.name and pod.app = nw.app and pod.prio > 3
group by pod.app
having sum(nw.w) is null or sum(nw.w) <= 7;

-- @soft_constraint
create view zone_count as
select 0 - sum(zc.k) from (
  select pod.app, count(*) as k from node_weight nw
  join pod on pod.node = nw.name and nw.zone = 'z1'
  group by pod.app) zc;

-- At most two pods of an app on nodes of node_weight: a group present
-- without its pod placed would make the placements infeasible.
-- @hard_constraint
create view few_per_app as
select pw.app from pod_weight pw group by pw.app having count(*) <= 2;
