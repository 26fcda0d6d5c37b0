-- vars: node nullable
-- fk: yes
-- Negations and comparisons of conditions over decision columns that
-- cannot be NULL (IS NULL, EXISTS, AND/OR of them): their "is false"
-- side is built only when NOT or a comparison asks for it.
-- @hard_constraint
create view not_crowded as
select * from pod
where not (pod.node is not null and pod.prio > 6
           and exists (select 1 from pod q where q.node = pod.node and q.name <> pod.name));

-- @hard_constraint
create view keep_means_placed as
select * from pod where (pod.node is not null) = (pod.keep or pod.cpu >= 3);

-- @soft_constraint
create view alone as
select sum(case when not (pod.node is null or exists (select 1 from pod q
                            where q.node = pod.node and q.name <> pod.name))
                then 2 else 0 end)
from pod;
