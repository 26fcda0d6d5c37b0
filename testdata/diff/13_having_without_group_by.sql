-- vars: node, keep
-- fk: yes
-- An aggregate hard view without group by, filtered by a decision column:
-- its single group exists even when no row is selected (count = 0).
-- @hard_constraint
create view exactly_one_kept as
select count(*) from pod where pod.keep = true having count(*) = 1;

-- @soft_constraint
create view few_kept as
select 0 - sum(case when pod.keep then pod.prio else 0 end) from pod;
