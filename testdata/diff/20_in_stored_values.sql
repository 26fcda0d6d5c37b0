-- vars: node nullable
-- fk: yes
-- IN / NOT IN of a stored value over a subquery of stored values (looked
-- up in a set made once per subquery result): a NULL among the values
-- makes NOT IN unknown, so it never holds.
-- @hard_constraint
create view gpu_or_unlisted as
select * from pod join node on pod.node = node.name
where pod.prio > 6
   or node.name not in (select case when l.k = 'bad' then null else l.node end from label l)
   or pod.app in (select 'a1' from label l where l.node = node.name and l.k = 'gpu');

-- @soft_constraint
create view placed as
select 2 * count(*) from pod where pod.node is not null;
