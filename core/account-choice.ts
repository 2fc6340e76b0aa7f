/**
 * Which account a call runs on. Pure: the caller's usable accounts come in already ordered
 * (own first, then the organisation's the caller may use), as the spec lists them.
 */
interface ChoosableAccount {
  id: string;
  label: string;
  scope: 'user' | 'tenant';
  isDefault: boolean;
}

/**
 * With a selector (account id or label; a connection id is mapped to its account id first):
 * that account. Without: the caller's default account, else the organisation's default the
 * caller may use, else the first usable one.
 */
export function chooseAccount<A extends ChoosableAccount>(accounts: readonly A[], selector?: string): A | undefined {
  if (selector !== undefined) return accounts.find((a) => a.id === selector) ?? accounts.find((a) => a.label === selector);
  const own = accounts.filter((a) => a.scope === 'user');
  const shared = accounts.filter((a) => a.scope === 'tenant');
  return own.find((a) => a.isDefault) ?? own[0] ?? shared.find((a) => a.isDefault) ?? shared[0];
}
