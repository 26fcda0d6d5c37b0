-- vars: node nullable
-- fk: yes
-- Sums and counts over a constant relation joined to the decision column
-- (S1's shape), computed without the join (decision_sum.go): the weight
-- of each row of the relation is added to a table indexed by each pod's
-- node. NULL weights are skipped, a sum over no present pair is NULL (so
-- "5 - sum" is NULL, and counts 0 in a soft constraint), a count is never
-- NULL, and the other filters read stored values of both sides.
create view node_weight as
select n.name, n.zone, case when n.ready then n.cpu end as w,
       case when n.zone = 'z0' then 'a0' else 'a1' end as app
from node n;

-- @soft_constraint
create view weighted as
select 0 - 3 * sum(nw.w) from node_weight nw
join pod on pod.node = nw.name;

-- @soft_constraint
create view weighted_app as
select 2 * count(*) + sum(nw.w) from node_weight nw
join pod on pod.app = nw.app and pod.node = nw.name;

-- @soft_constraint
create view five_minus as
select 5 - sum(nw.w) from node_weight nw
join pod on pod.node = nw.name and pod.prio > 4;

-- @soft_constraint
create view gpu_pods as
select 3 * count(*) from label l
join pod on pod.node = l.node and l.k = 'gpu';

-- At most eight units of weight under the high-priority pods, or none.
-- @hard_constraint
create view light_under_high as
select 1 from node_weight nw
join pod on pod.node = nw.name and pod.prio > 6
having sum(nw.w) is null or sum(nw.w) <= 8;

-- coalesce(sum, count): the count where the sum is NULL, not 0 (the
-- sum is NULL unless a pod is on a ready node of 5 cpu).
-- @soft_constraint
create view sum_or_count as
select coalesce(sum(case when nw.w > 4 then nw.w end), 2 * count(*)) from node_weight nw
join pod on pod.node = nw.name;
