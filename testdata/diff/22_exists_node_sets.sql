-- vars: node nullable
-- fk: yes
-- EXISTS tied to the pod's node by one equality over stored rows is read
-- as "node ∈ S": S is computed once per combination of the pod's stored
-- values the subquery reads (cpu, app, prio), and shared by the pods that
-- agree on them; NULL values never equal the node.
-- @hard_constraint
create view roomy_node as
select * from pod
where pod.node is null or pod.prio > 7
   or exists (select 1 from node m where m.cpu >= pod.cpu + 2 and m.name = pod.node);

-- @hard_constraint
create view not_bad_for_app as
select * from pod
where not exists (select 1 from label l join node n on n.name = l.node
                  where l.k = 'bad' and (pod.app = 'a1' or n.zone = 'z0') and pod.node = l.node);

-- @hard_constraint
create view gpu_listed as
select * from pod
where pod.node is null or pod.prio < 4
   or exists (select 1 from (select case when l.k = 'gpu' then l.node end as n from label l) d
              where d.n = pod.node);

-- @soft_constraint
create view on_strong_ready as
select 3 * count(*) from pod
where exists (select 1 from node n where n.ready = true and n.cpu > pod.prio / 2 and n.name = pod.node);

-- @soft_constraint
create view placed as
select 2 * count(*) from pod where pod.node is not null;

-- A pod without a node is never on a listed node, NULL entries or not.
-- @hard_constraint
create view off_listed as
select * from pod
where pod.app = 'a0'
   or not exists (select 1 from (select case when l.k = 'bad' then l.node end as n from label l) d
                  where d.n = pod.node);

-- a1 pods would rather stay out: off_listed must let them.
-- @soft_constraint
create view a1_stays_out as
select 0 - 9 * count(*) from pod where pod.node is not null and pod.app = 'a1';

-- Nested: the node is decided two levels out, the set keyed by a column
-- of each level (n.zone, pod.cpu).
-- @hard_constraint
create view nested_zone_room as
select * from pod
where pod.node is null or pod.prio < 4
   or exists (select 1 from node n where n.name = 'n1'
              and not exists (select 1 from node m where m.zone = n.zone and m.cpu < pod.cpu + 3
                              and m.name = pod.node));
