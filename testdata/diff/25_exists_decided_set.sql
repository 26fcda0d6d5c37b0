-- vars: node nullable
-- fk: yes
-- EXISTS tied to the pod's node by an equality with another pod's node,
-- both decided, is "node equals one of theirs" (one var_membership); NULL
-- nodes never match, a pod always matches itself when placed, and the
-- reified form (counted in a soft constraint) needs its negation too.
-- @hard_constraint
create view a1_joins_a0 as
select * from pod
where pod.app <> 'a1' or pod.node is null
   or exists (select 1 from pod q where q.app = 'a0' and q.name <> pod.name and q.node = pod.node);

-- @hard_constraint
create view big_not_alone as
select * from pod
where pod.cpu < 3 or pod.app = 'a1'
   or exists (select 1 from pod q where q.cpu >= pod.cpu and q.node = pod.node);

-- @soft_constraint
create view under_a_senior as
select 4 * count(*) from pod
where exists (select 1 from pod q where q.prio > pod.prio and q.node = pod.node);

-- @hard_constraint
create view a0_apart as
select * from pod
where pod.app <> 'a0'
   or not exists (select 1 from pod q where q.app = 'a0' and q.name <> pod.name and q.node = pod.node);

-- @soft_constraint
create view placed as
select 3 * count(*) from pod where pod.node is not null and pod.app = 'a0';

-- Placing an a1 pod costs: two unplaced pods must not count as together.
-- @soft_constraint
create view a1_costs as
select 0 - 5 * count(*) from pod where pod.node is not null and pod.app = 'a1';
