-- vars: node
-- fk: yes
-- Views on views, with a pushed-down view in the middle.
create view big_nodes as
select node.name as name from node where node.cpu >= 4;

create view placed_big as
select pod.name as name, pod.app as app from pod where pod.node in (select name from big_nodes);

create view apps_on_big as
select app, count(*) as n from placed_big group by app;

-- @hard_constraint
create view not_all_big as
select * from apps_on_big where n <= 1;

-- @soft_constraint
create view zone_mix as
select count(*) from pod p join node on p.node = node.name join label on label.node = node.name
where label.k = 'gpu';
