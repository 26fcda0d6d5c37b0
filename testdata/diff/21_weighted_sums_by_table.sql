-- vars: node nullable
-- fk: yes
-- Sums and counts over rows joined on a decision column with constant
-- weights: from four terms on one pod's node they are read from a table
-- indexed by the node (one element constraint). A NULL sum (no row) is 0
-- in a soft constraint and in coalesce(sum, 0), but "5 - sum" is NULL
-- then, not 5; and "sum is null" still needs the rows' presence.
-- @soft_constraint
create view zone_mates as
select 0 - 2 * sum(n.cpu) from pod
join node n on n.name = pod.node
join node m on m.zone = n.zone
group by pod.name;

-- @soft_constraint
create view five_minus as
select 5 - sum(m.cpu) from pod
join node n on n.name = pod.node
join node m on m.zone = n.zone
where pod.app = 'a0';

-- @soft_constraint
create view ready_mates as
select 4 - 3 * sum(case when m.ready then m.cpu end) from pod
join node n on n.name = pod.node
join node m on m.zone = n.zone
group by pod.name;

-- @soft_constraint
create view mates_counted as
select coalesce(count(*), 0) + 3 * coalesce(sum(m.cpu), 0) from pod
join node n on n.name = pod.node
join node m on m.zone = n.zone and m.ready = true
where pod.prio > 3
group by pod.name;

-- A pod of priority above 6 is placed where its zone's mates have little
-- CPU, or not at all.
-- @hard_constraint
create view light_zone as
select pod.name from pod
join node n on n.name = pod.node
join node m on m.zone = n.zone
where pod.prio > 6
group by pod.name
having sum(m.cpu) is null or sum(m.cpu) <= 8;
