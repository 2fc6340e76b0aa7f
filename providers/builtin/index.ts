import type { Provider } from '../sdk/index.js';
import { atlassianJira } from './atlassian-jira/index.js';
import { browser } from './browser/index.js';
import { github } from './github/index.js';
import { hackernews } from './hackernews/index.js';
import { jots } from './jots/index.js';
import { linear } from './linear/index.js';
import { slack } from './slack/index.js';

/** Every built-in provider. Adding one is a folder plus one line here. */
export const builtinProviders: readonly Provider[] = [github, atlassianJira, slack, linear, hackernews, browser, jots];
