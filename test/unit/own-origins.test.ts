import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { isLoopbackHost, isOperatorHost, isOwnHost, isOwnOrigin } from '../../core/own-origins.js';

const config = (env: Record<string, string>) => loadConfig(env);

describe('finding 10: which hosts and origins are ours', () => {
  it('finding 10: a public PUBLIC_BASE_URL admits its own host only (its scheme’s default port when the Host has none)', () => {
    const c = config({ PUBLIC_BASE_URL: 'https://switchboard.example.com' });
    for (const host of ['switchboard.example.com', 'switchboard.example.com:443', 'SWITCHBOARD.example.com', 'switchboard.example.com.']) {
      expect(isOwnHost(c, host), host).toBe(true);
    }
    for (const host of [
      'switchboard.example.com:80',
      'evil.example.com',
      'localhost',
      '127.0.0.1:443',
      'a@switchboard.example.com',
      'switchboard.example.com/x',
      '',
      undefined,
    ]) {
      expect(isOwnHost(c, host), String(host)).toBe(false);
    }
    expect(isOwnOrigin(c, 'https://switchboard.example.com')).toBe(true);
    for (const origin of [
      'http://switchboard.example.com',
      'https://switchboard.example.com:8443',
      'https://evil.example.com',
      'null',
      'file://',
      undefined,
    ]) {
      expect(isOwnOrigin(c, origin), String(origin)).toBe(false);
    }
  });

  it('finding 10: a loopback PUBLIC_BASE_URL admits localhost, 127.0.0.1 and [::1] on its port, nothing else', () => {
    const c = config({ PUBLIC_BASE_URL: 'http://localhost:3000' });
    for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', '[0:0:0:0:0:0:0:1]:3000'])
      expect(isOwnHost(c, host), host).toBe(true);
    for (const host of ['localhost:3001', '127.0.0.1', 'rebind.test:3000', '127.0.0.1.nip.io:3000'])
      expect(isOwnHost(c, host), host).toBe(false);
    expect(isOwnOrigin(c, 'http://127.0.0.1:3000')).toBe(true);
    expect(isOwnOrigin(c, 'http://localhost:8233')).toBe(false);
  });

  it('finding 10: ALLOWED_HOSTS adds names (a name alone on any port), checked like PUBLIC_BASE_URL’s', () => {
    const c = config({ PUBLIC_BASE_URL: 'https://sb.example.com', ALLOWED_HOSTS: 'sb.internal, 10.0.0.5:3000' });
    expect(isOwnHost(c, 'sb.internal:3000')).toBe(true);
    expect(isOwnHost(c, '10.0.0.5:3000')).toBe(true);
    expect(isOwnHost(c, '10.0.0.5:3001')).toBe(false);
    expect(isOwnOrigin(c, 'http://sb.internal:3000')).toBe(true);
    expect(() => config({ ALLOWED_HOSTS: 'not a host' })).toThrow(ConfigError);
  });

  it('finding 14: the operator port admits IP literals, localhost and ALLOWED_HOSTS — never a rebound name', () => {
    const c = config({ ALLOWED_HOSTS: 'prometheus-target' });
    for (const host of ['127.0.0.1:9464', '[::1]:9464', '10.1.2.3:9464', 'localhost:9464', 'prometheus-target:9464']) {
      expect(isOperatorHost(c, host), host).toBe(true);
    }
    for (const host of ['rebind.test:9464', 'evil.example.com', undefined]) expect(isOperatorHost(c, host), String(host)).toBe(false);
  });

  it('finding 10: CODEC_AUTH=none is refused at start unless the server binds to loopback', () => {
    for (const HOST of ['0.0.0.0', '::', '10.0.0.5', 'switchboard.example.com']) {
      try {
        config({ CODEC_AUTH: 'none', HOST });
        throw new Error(`accepted HOST=${HOST}`);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).problems).toEqual([{ variable: 'CODEC_AUTH', message: expect.stringContaining('loopback') }]);
      }
    }
    for (const HOST of ['127.0.0.1', '::1', 'localhost']) expect(config({ CODEC_AUTH: 'none', HOST }).CODEC_AUTH).toBe('none');
    expect(config({ HOST: '0.0.0.0' }).CODEC_AUTH).toBe('operator');
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
  });

  it('finding 14: the worker’s old WORKER_METRICS_PORT is named as renamed, not silently ignored', () => {
    expect(() => config({ WORKER_METRICS_PORT: '9464' })).toThrow(/METRICS_PORT/);
    expect(config({ METRICS_PORT: '9464' })).toMatchObject({ METRICS_PORT: 9464, METRICS_HOST: '127.0.0.1' });
  });
});
