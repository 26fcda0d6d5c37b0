-- Shared tables of the differential tests. {{VARS}} and {{FK}} are filled
-- in from each policy's header.
create table node
(
  name varchar(20) not null primary key,
  cpu integer not null,
  zone varchar(10) not null,
  ready boolean not null
);

create table label
(
  node varchar(20) not null,
  k varchar(10) not null,
  v varchar(10) not null
);

-- @variable_columns ({{VARS}})
create table pod
(
  name varchar(20) not null primary key,
  app varchar(10) not null,
  cpu integer not null,
  prio integer not null,
  node varchar(20) {{FK}},
  keep boolean
);
