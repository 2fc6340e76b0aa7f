import { describe, expect, it } from 'vitest';
import { ACCOUNT_LABEL_MAX_CHARS, accountLabelSchema, fitAccountLabel } from '../../core/account-label.js';

describe('account label', () => {
  it('a typed label is trimmed and must fit the one limit', () => {
    expect(accountLabelSchema.parse('  Work  ')).toBe('Work');
    expect(accountLabelSchema.safeParse('x'.repeat(ACCOUNT_LABEL_MAX_CHARS)).success).toBe(true);
    expect(accountLabelSchema.safeParse('x'.repeat(ACCOUNT_LABEL_MAX_CHARS + 1)).success).toBe(false);
    expect(accountLabelSchema.safeParse('   ').success).toBe(false);
    expect(accountLabelSchema.safeParse('a\nb').success).toBe(false);
  });

  it("a service's account name is cut to the same limit, so it fits the rename box", () => {
    expect(fitAccountLabel('y'.repeat(500))).toHaveLength(ACCOUNT_LABEL_MAX_CHARS);
    expect(fitAccountLabel('Acme')).toBe('Acme');
  });
});
