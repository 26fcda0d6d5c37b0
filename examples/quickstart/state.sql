-- A small cluster for the quickstart policy: six nodes (one cordoned),
-- twelve pending pods, three of them with node affinity.

-- name, unschedulable, memory_pressure, disk_pressure, ready, available_cpu_capacity
insert into node values
  ('node-a', false, false, false, true, 4000),
  ('node-b', false, false, false, true, 4000),
  ('node-c', false, false, false, true, 2000),
  ('node-d', false, false, false, true, 8000),
  ('node-e', false, false, false, true, 2000),
  ('node-f', true,  false, false, true, 8000);  -- cordoned: unschedulable

insert into node_label values
  ('node-a', 'zone', 'us-east-1a'),
  ('node-b', 'zone', 'us-east-1b'),
  ('node-c', 'zone', 'us-east-1a'),
  ('node-d', 'zone', 'us-east-1b'),
  ('node-e', 'zone', 'us-east-1c'),
  ('node-f', 'zone', 'us-east-1c'),
  ('node-d', 'disk', 'ssd'),
  ('node-f', 'disk', 'ssd');

-- pod_name, status, namespace, node_name (decided by Weave), cpu_request,
-- has_requested_node_affinity
insert into pending_pod values
  ('web-1',    'Pending', 'shop',    null, 500,  false),
  ('web-2',    'Pending', 'shop',    null, 500,  false),
  ('web-3',    'Pending', 'shop',    null, 500,  false),
  ('api-1',    'Pending', 'shop',    null, 1000, false),
  ('api-2',    'Pending', 'shop',    null, 1000, false),
  ('cache-1',  'Pending', 'shop',    null, 750,  true),
  ('db-1',     'Pending', 'shop',    null, 2000, true),
  ('worker-1', 'Pending', 'batch',   null, 1500, false),
  ('worker-2', 'Pending', 'batch',   null, 1500, false),
  ('metrics',  'Pending', 'monitor', null, 250,  true),
  ('logs',     'Pending', 'monitor', null, 250,  false),
  ('cron',     'Pending', 'batch',   null, 300,  false);

-- cache-1 wants zone us-east-1a (node-a or node-c); db-1 wants an SSD
-- (node-d; node-f has one too but is cordoned); metrics wants zone
-- us-east-1c (node-e; node-f is cordoned).
insert into pod_node_selector values
  ('cache-1', 'zone', 'us-east-1a'),
  ('db-1',    'disk', 'ssd'),
  ('metrics', 'zone', 'us-east-1c');
