import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REQUIRED_IN_PRODUCTION } from '../../core/config.js';

// No Docker engine runs here, so the compose file is checked by reading it.
const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), { merge: true });

describe('docker-compose.yml', () => {
  it('runs Postgres, Temporal, Temporal UI, the worker and the server', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['postgres', 'server', 'temporal', 'temporal-ui', 'worker']);
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
