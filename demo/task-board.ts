import { randomBytes } from 'node:crypto';
import type { DemoState } from './demo-state.js';

/** One to-do item of a demo account. */
export interface Task {
  id: string;
  title: string;
  done: boolean;
  createdAt: string;
}

/** What a new demo account finds on its board: something to list, complete and delete at once. */
const FIRST_TASKS = ['Connect the demo from an agent', 'Watch the connection workflow in Temporal UI', 'Delete a task (it asks first)'];

/** Most tasks one demo account keeps: the board is a toy, not storage. */
export const MAX_TASKS = 100;

export class TaskNotFound extends Error {
  constructor(id: string) {
    super(`No task ${id} on this board`);
  }
}

/**
 * The demo service's data: a small to-do list per demo account (the account the person signed in
 * as at the demo's authorization server), seeded on first use, saved with the demo's state.
 */
export class TaskBoard {
  constructor(private readonly state: DemoState) {}

  list(account: string, status: 'open' | 'done' | 'all' = 'all'): Task[] {
    return this.board(account).filter((t) => status === 'all' || t.done === (status === 'done'));
  }

  get(account: string, id: string): Task {
    const task = this.board(account).find((t) => t.id === id);
    if (!task) throw new TaskNotFound(id);
    return task;
  }

  create(account: string, title: string): Task {
    const board = this.board(account);
    if (board.length >= MAX_TASKS) throw new Error(`A demo board holds at most ${MAX_TASKS} tasks; delete some first`);
    const task = newTask(title);
    board.push(task);
    this.state.save();
    return task;
  }

  complete(account: string, id: string): Task {
    const task = this.get(account, id);
    task.done = true;
    this.state.save();
    return task;
  }

  delete(account: string, id: string): Task {
    const task = this.get(account, id);
    const board = this.board(account);
    board.splice(board.indexOf(task), 1);
    this.state.save();
    return task;
  }

  private board(account: string): Task[] {
    const boards = this.state.data.boards;
    if (!Object.hasOwn(boards, account)) {
      boards[account] = FIRST_TASKS.map(newTask);
      this.state.save();
    }
    return boards[account];
  }
}

const newTask = (title: string): Task => ({
  id: `t_${randomBytes(4).toString('hex')}`,
  title,
  done: false,
  createdAt: new Date().toISOString(),
});
