import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_LTS_VERSION, nodeSupport } from '../../scripts/setup.mjs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

describe('supported Node lines', () => {
  it('engines names the LTS lines in support, 22, 24 and 26, each from its first LTS release', () => {
    expect(pkg.engines.node).toBe('^22.11.0 || ^24.11.0 || ^26.11.0');
  });

  it('npm start names a supported Node plainly, and an unsupported one with what to use instead', () => {
    for (const version of ['22.11.0', '22.20.1', '24.11.0', '24.22.3', '26.12.1'])
      expect(nodeSupport(version), version).toEqual({ supported: true, message: `Node ${version}` });
    for (const version of ['20.20.2', '22.10.0', '23.11.1', '24.10.0', '26.10.0', '27.0.0', '18.20.8']) {
      const { supported, message } = nodeSupport(version);
      expect(supported, version).toBe(false);
      expect(message).toBe(
        `Node ${version} is not a supported LTS release: this project supports Node 22 (22.11.0 or later) or 24 (24.11.0 or later) or 26 (26.11.0 or later); expect failures, and upgrade`,
      );
    }
  });

  it('the tests run on a supported line (24, the Node most users run), and the image ships that line too', () => {
    const tested = Number(NODE_LTS_VERSION.split('.')[0]);
    expect(nodeSupport(NODE_LTS_VERSION).supported).toBe(true);
    expect(tested).toBe(24);
    const from = /^FROM node:(\d+)-/m.exec(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8'))?.[1];
    expect(Number(from)).toBe(tested);
  });
});
