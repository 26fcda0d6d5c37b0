-- vars: node nullable
-- fk: yes
-- Required disjunctions whose disjuncts share atoms: "x is null or
-- exists (... q.node = x ...)" carries "x not null" into every pair (it
-- may be dropped: the first disjunct covers x null), but not another
-- pod's "not null".
-- @hard_constraint
create view follow_app as
select * from pod
where pod.node is null or pod.prio > 6
   or exists (select 1 from pod q where q.app = pod.app and q.name <> pod.name and q.node = pod.node);

-- A pod is placed only if a pod of higher priority is: the other pod's
-- "is not null" must stay (only the pod's own is covered by "is null").
-- @hard_constraint
create view after_higher as
select * from pod
where pod.node is null or pod.prio > 7
   or exists (select 1 from pod q where q.name <> pod.name and q.node is not null and q.node <> 'n0'
              and q.prio > pod.prio);

-- @soft_constraint
create view placed as
select 2 * count(*) from pod where pod.node is not null;

-- @soft_constraint
create view off_n1 as
select count(*) from pod where pod.node <> 'n1';
