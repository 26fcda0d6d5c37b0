-- The paper's capacity constraint as users write it: a filter over the grouped
-- view spare_capacity_per_node of testdata/paper.sql.
-- @hard_constraint
create view constraint_capacity as
select * from spare_capacity_per_node where cpu_spare >= 0;
