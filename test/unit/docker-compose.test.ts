import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TEMPORAL_DYNAMIC_CONFIG } from '../../bin/support/temporal-dynamic-config.js';
import { DYNAMIC_CONFIG_FILE, TEMPORAL_NAMESPACE_SETTINGS, TEMPORAL_SERVER_SETTINGS } from '../../bin/support/temporal-server.js';
import { REQUIRED_IN_PRODUCTION } from '../../core/config.js';
import { SEARCH_ATTRIBUTE_FLAGS } from '../../core/search-attributes.js';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/setup.mjs';

// No Docker engine runs here, so the compose file is checked by reading it.
const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), { merge: true });

describe('docker-compose.yml', () => {
  it('runs Postgres, Temporal with its two one-shot setup steps, Temporal UI, the worker and the server', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'postgres',
      'server',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
      'temporal-ui',
      'worker',
    ]);
  });

  it('sets every variable the app requires, for the worker and the server', () => {
    for (const name of ['worker', 'server']) {
      const env = compose.services[name].environment;
      for (const variable of REQUIRED_IN_PRODUCTION) expect(env[variable], `${name}.${variable}`).toBeTruthy();
      expect(env.NODE_ENV).toBe('production');
    }
  });

  it('lines the ports up: the app reaches the services it names, and publishes its own port', () => {
    const env = compose.services.server.environment;
    const db = new URL(env.DATABASE_URL);
    expect(db.hostname).toBe('postgres');
    expect(compose.services.postgres.environment.POSTGRES_USER).toBe(decodeURIComponent(db.username));
    expect(compose.services.postgres.environment.POSTGRES_PASSWORD).toBe(decodeURIComponent(db.password));
    expect(compose.services.postgres.environment.POSTGRES_DB).toBe(db.pathname.slice(1));
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(compose.services.temporal.ports).toContain('127.0.0.1:7233:7233');
    expect(compose.services.server.ports).toContain(`${env.PORT}:${env.PORT}`);
    expect(new URL(env.PUBLIC_BASE_URL).port).toBe(env.PORT);
    expect(compose.services['temporal-ui'].environment.TEMPORAL_ADDRESS).toBe(env.TEMPORAL_ADDRESS);
  });

  it('finding 7: Postgres, Temporal and Temporal UI are published on loopback only', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui']) {
      const ports: string[] = compose.services[name].ports;
      expect(ports.length, name).toBeGreaterThan(0);
      for (const port of ports) expect(port, `${name} publishes ${port}`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
  });
});

/** What a service's `volumes` mount from deploy/temporal, and where. */
const mountOf = (service: string) => {
  const mount = (compose.services[service].volumes as string[]).find((v) => v.startsWith('./deploy/temporal:'));
  expect(mount, `${service} mounts deploy/temporal`).toBeDefined();
  return mount!.split(':')[1];
};

describe('docker-compose.yml runs Temporal exactly as `npm run test:cluster` does', () => {
  const { temporal, 'temporal-schema': schema, 'temporal-namespace': namespace } = compose.services;

  it('the official server and admin-tools images of the release the tests build', () => {
    expect(temporal.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    expect(schema.image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    expect(namespace.image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
  });

  it("the server's settings are the tested ones, and it sets nothing the tests do not", () => {
    const env = temporal.environment;
    for (const [name, value] of Object.entries(TEMPORAL_SERVER_SETTINGS)) expect(env[name], name).toBe(value);
    const database = ['DB_PORT', 'POSTGRES_SEEDS', 'POSTGRES_USER', 'POSTGRES_PWD', 'DBNAME', 'VISIBILITY_DBNAME'];
    expect(Object.keys(env).sort()).toEqual([...Object.keys(TEMPORAL_SERVER_SETTINGS), ...database, 'DYNAMIC_CONFIG_FILE_PATH'].sort());
    // No command of its own: the image's entrypoint, `temporal-server start` from its embedded template.
    expect(temporal.command).toBeUndefined();
    expect(temporal.entrypoint).toBeUndefined();
  });

  it('the same dynamic config file, mounted, holding the values the dev server gets', () => {
    const mounted = mountOf('temporal');
    expect(temporal.environment.DYNAMIC_CONFIG_FILE_PATH).toBe(`${mounted}/dynamicconfig.yaml`);
    expect(existsSync(DYNAMIC_CONFIG_FILE)).toBe(true);
    const file = parse(readFileSync(DYNAMIC_CONFIG_FILE, 'utf8')) as Record<string, { value: unknown }[]>;
    expect(Object.fromEntries(Object.entries(file).map(([key, values]) => [key, values.map((v) => v.value)]))).toEqual(
      Object.fromEntries(Object.entries(TEMPORAL_DYNAMIC_CONFIG).map(([key, value]) => [key, [value]])),
    );
  });

  it('the schema and the namespace are set up by the same script the tests run, once each, in order', () => {
    expect(schema.command).toEqual(['sh', `${mountOf('temporal-schema')}/setup.sh`, 'schema']);
    expect(namespace.command).toEqual(['sh', `${mountOf('temporal-namespace')}/setup.sh`, 'namespace']);
    expect(existsSync(join(DYNAMIC_CONFIG_FILE, '..', 'setup.sh'))).toBe(true);
    for (const oneShot of [schema, namespace]) expect(oneShot.restart).toBe('no');
    expect(temporal.depends_on['temporal-schema']).toEqual({ condition: 'service_completed_successfully' });
    for (const app of ['worker', 'server']) {
      expect(compose.services[app].depends_on['temporal-namespace'], app).toEqual({ condition: 'service_completed_successfully' });
    }
  });

  it('one database setting for all three, on the compose Postgres and its user', () => {
    const { postgres } = compose.services;
    for (const service of [temporal, schema, namespace]) {
      expect(service.environment).toMatchObject({
        DB: TEMPORAL_SERVER_SETTINGS.DB,
        POSTGRES_SEEDS: 'postgres',
        DB_PORT: '5432',
        POSTGRES_USER: postgres.environment.POSTGRES_USER,
        POSTGRES_PWD: postgres.environment.POSTGRES_PASSWORD,
        DBNAME: 'temporal',
        VISIBILITY_DBNAME: 'temporal_visibility',
      });
    }
  });

  it("the namespace step: the app's namespace and address, the tested retention, and Switchboard's search attributes", () => {
    const app = compose.services.server.environment;
    expect(namespace.environment).toMatchObject({
      TEMPORAL_ADDRESS: app.TEMPORAL_ADDRESS,
      NAMESPACE: app.TEMPORAL_NAMESPACE,
      NAMESPACE_RETENTION: TEMPORAL_NAMESPACE_SETTINGS.NAMESPACE_RETENTION,
      SEARCH_ATTRIBUTES: TEMPORAL_NAMESPACE_SETTINGS.SEARCH_ATTRIBUTES,
    });
    expect(namespace.environment.SEARCH_ATTRIBUTES.split(' ')).toEqual(SEARCH_ATTRIBUTE_FLAGS);
  });
});
