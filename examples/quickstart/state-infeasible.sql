-- The quickstart cluster with one pod that cannot be placed: gpu-job asks
-- for a GPU node, and the only one (node-g) is cordoned. The policy is
-- proven infeasible: weave solve exits with status 2.

-- name, unschedulable, memory_pressure, disk_pressure, ready, available_cpu_capacity
insert into node values
  ('node-a', false, false, false, true, 4000),
  ('node-b', false, false, false, true, 4000),
  ('node-c', false, false, false, true, 2000),
  ('node-d', false, false, false, true, 8000),
  ('node-e', false, false, false, true, 2000),
  ('node-g', true,  false, false, true, 8000);  -- cordoned: unschedulable

insert into node_label values
  ('node-a', 'zone', 'us-east-1a'),
  ('node-b', 'zone', 'us-east-1b'),
  ('node-c', 'zone', 'us-east-1a'),
  ('node-d', 'zone', 'us-east-1b'),
  ('node-e', 'zone', 'us-east-1c'),
  ('node-g', 'accelerator', 'gpu');

insert into pending_pod values
  ('web-1',   'Pending', 'shop',  null, 500,  false),
  ('web-2',   'Pending', 'shop',  null, 500,  false),
  ('api-1',   'Pending', 'shop',  null, 1000, false),
  ('cache-1', 'Pending', 'shop',  null, 750,  true),
  ('gpu-job', 'Pending', 'ml',    null, 2000, true);

insert into pod_node_selector values
  ('cache-1', 'zone',        'us-east-1a'),
  ('gpu-job', 'accelerator', 'gpu');
