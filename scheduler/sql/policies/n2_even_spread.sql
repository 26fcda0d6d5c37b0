-- N2 (new; even pod spreading): a group with a hard spread constraint of
-- max_skew 0 puts at most ceil(|pods| / |valid domains|) pods in each
-- domain of the topology key: nodes (hostname) or zones (spread_count).
-- @hard_constraint
create view n2_even_spread as
select * from spread_count c
where c.max_skew > 0 or c.pods <= (c.group_size + c.domains - 1) / c.domains;
