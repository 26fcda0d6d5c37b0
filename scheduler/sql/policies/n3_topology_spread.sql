-- N3 (PodTopologySpread, DoNotSchedule): the pods of a group in the most
-- and the least loaded domain of the topology key differ by at most
-- max_skew, counting every valid domain, empty ones too (spread_count).
-- @hard_constraint
create view n3_topology_spread as
select c.group_name, c.topology_key
from spread_count c
where c.max_skew > 0
group by c.group_name, c.topology_key
having max(c.pods) - min(c.pods) <= min(c.max_skew);
