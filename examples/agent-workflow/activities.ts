import type { ApprovalUrlNotice, ConnectUrlNotice } from '../../surfaces/workflow-sdk/index.js';

/**
 * Hands the connect link (or, for a call that needs a person's approval, the approval page) to the
 * human: a JSON POST to NOTIFY_WEBHOOK_URL (a chat channel, an email service) when it is set,
 * otherwise a line on this worker's console (trying it out next to `npm start`).
 */
export async function sendConnectLink(notice: ConnectUrlNotice | ApprovalUrlNotice): Promise<void> {
  const text =
    notice.reason === 'approval_required'
      ? `Please approve or deny ${notice.tool}: ${notice.url}`
      : `Please connect ${notice.integration}: ${notice.url}`;
  const target = process.env.NOTIFY_WEBHOOK_URL;
  if (!target) {
    console.log(text);
    return;
  }
  const res = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, ...notice }),
  });
  if (!res.ok) throw new Error(`the webhook answered HTTP ${res.status}`);
}
