import { defineProvider } from '../../sdk/index.js';
import { browserTools } from './tools.js';

export const browser = defineProvider(
  {
    name: 'browser',
    version: '1.0.0',
    displayName: 'Browser',
    description: 'Open public web pages: text, links, screenshots, CSS extraction',
    auth: 'none',
    envPrefix: 'BROWSER',
    toolPrefix: 'browser',
  },
  browserTools,
);
