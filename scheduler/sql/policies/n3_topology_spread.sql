-- N3 (PodTopologySpread, DoNotSchedule): a domain that receives pods of a
-- group ends with at most max_skew more of them than the least loaded
-- valid domain of the topology key (empty domains count).
create view spread_min as
select c.group_name, c.topology_key, min(c.bound + c.added) as pods
from spread_count c
group by c.group_name, c.topology_key;

-- @hard_constraint
create view n3_topology_spread as
select * from spread_count c
join spread_min m on m.group_name = c.group_name and m.topology_key = c.topology_key
where c.max_skew = 0 or c.added = 0 or c.bound + c.added - m.pods <= c.max_skew;
