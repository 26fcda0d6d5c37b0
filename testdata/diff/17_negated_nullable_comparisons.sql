-- vars: node nullable
-- fk: yes
-- Comparisons whose operands may be NULL (an unplaced pod's node), negated
-- or inside OR and compared again: NOT (NULL = x) is NULL, so is
-- (NULL = x OR false) — neither satisfies a check nor counts in a CASE.
-- Leaving pods unplaced is rewarded, so treating them as false or true
-- would change the optimum.
-- @hard_constraint
create view apart_from_p0 as
select * from pod join pod q on q.name = 'p0' and pod.name <> q.name
where not (pod.node = q.node) or pod.prio > 6;

-- @hard_constraint
create view placed_matches_cpu as
select * from pod where pod.prio < 4 or ((pod.node = 'n0' or pod.cpu > 2) = pod.keep);

-- @soft_constraint
create view unplaced as
select 2 * count(*) from pod where pod.node is null;

-- @soft_constraint
create view off_n1 as
select sum(case when not (pod.node = 'n1') then 1 else 0 end) from pod;
