-- N2 (new; even pod spreading): a group with a hard spread constraint of
-- max_skew 0 ends with at most ceil(|pods| / |valid domains|) pods in each
-- domain of the topology key that receives pods: nodes (hostname) or zones.
-- @hard_constraint
create view n2_even_spread as
select * from even_spread_count c
where c.added = 0
   or c.bound + c.added <= (c.group_size + c.domains - 1) / c.domains;
