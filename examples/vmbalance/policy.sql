-- Capacity: the VMs on a host fit its CPU and memory.
-- @hard_constraint
create view capacity as
select host.name from host join vm on vm.host = host.name
group by host.name
having sum(vm.cpu) <= host.cpu_capacity and sum(vm.mem) <= host.mem_capacity;

-- VM–VM affinity: the two VMs of a "together" rule share a host.
-- @hard_constraint
create view vm_vm_affinity as
select * from vm_vm_rule
join vm a on a.name = vm_vm_rule.vm1
join vm b on b.name = vm_vm_rule.vm2
where vm_vm_rule.together = false or a.host = b.host;

-- VM–VM anti-affinity: the two VMs of a "apart" rule never share a host.
-- @hard_constraint
create view vm_vm_anti_affinity as
select * from vm_vm_rule
join vm a on a.name = vm_vm_rule.vm1
join vm b on b.name = vm_vm_rule.vm2
where vm_vm_rule.together = true or a.host <> b.host;

-- VM–host affinity: a VM with "must" rules runs on one of its hosts.
-- @hard_constraint
create view vm_host_affinity as
select * from vm
where vm.name not in (select vm_name from vm_host_must)
   or vm.host in (select host_name from vm_host_must where vm_host_must.vm_name = vm.name);

-- VM–host anti-affinity: never on a "must not" host.
-- @hard_constraint
create view vm_host_anti_affinity as
select * from vm
where vm.host not in (select host_name from vm_host_must_not where vm_host_must_not.vm_name = vm.name);

-- At most K migrations per round.
-- @hard_constraint
create view migration_budget as
select count(*) from vm where vm.host <> vm.current_host
having count(*) <= (select max_migrations from balance_policy);

-- Memory utilisation of each host in hundredths of a percent of its own
-- capacity (division by the host's capacity, a constant per host).
create view host_utilisation as
select host.name as name, 10000 * sum(vm.mem) / host.mem_capacity as util
from host join vm on vm.host = host.name
group by host.name;

-- Balance: minimise the spread between the most and least utilised host.
-- @soft_constraint
create view balance as
select min(util) - max(util) from host_utilisation;

-- A small penalty per migration.
-- @soft_constraint
create view migration_cost as
select 0 - count(*) * (select migration_penalty from balance_policy) from vm
where vm.host <> vm.current_host;
