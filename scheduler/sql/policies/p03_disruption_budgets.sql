-- P3 (PodDisruptionBudget, as the Eviction API enforces it,
-- pkg/registry/core/pod/storage/eviction.go of k8s.io/kubernetes v1.37.2):
-- a plan evicts at most status.disruptionsAllowed of the pods one budget
-- selects. victim_budget (schema.sql) names each victim's budget, from
-- Config.DisruptionBudget. kube-scheduler's DefaultPreemption only
-- prefers victims whose eviction violates no budget and deletes them
-- anyway; weave-scheduler evicts through the Eviction API, which refuses
-- the eviction past the budget: a plan needing it would be refused
-- midway, its first evictions done and no preemptor bound. Preemption
-- model only.
-- @hard_constraint
create view p03_disruption_budgets as
select b.budget
from pending_pod join victim_budget b on b.pod_name = pending_pod.pod_name
where pending_pod.bound_node is not null and pending_pod.node_name is null
group by b.budget, b.allowed
having count(*) <= b.allowed;
