// The capture page's script (served as /portal/capture.js; the CSP allows no inline scripts).
// Shows the remote browser by reloading its frame, forwards clicks, keys and text to it with
// the page's CSRF token, and runs Capture and Cancel.
(() => {
  const root = document.getElementById('capture');
  if (!root) return;
  const base = root.dataset.base;
  const csrf = root.dataset.csrf;
  const width = Number(root.dataset.width);
  const height = Number(root.dataset.height);
  const live = document.getElementById('live');
  const status = document.getElementById('status');
  const remoteUrl = document.getElementById('remote-url');
  const heading = document.querySelector('h1');
  let running = true;
  let frameNo = 0;

  const show = (kind, message) => {
    status.hidden = false;
    status.className = `box ${kind}`;
    status.textContent = message;
  };

  const ended = (title, message, kind) => {
    running = false;
    heading.textContent = title;
    root.hidden = true;
    document.getElementById('intro').hidden = true;
    show(kind, message);
  };

  const post = (path, body) =>
    fetch(`${base}/${path}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(body || {}),
    });

  const endedElsewhere = () =>
    ended(
      'Sign-in ended',
      'This sign-in browser is closed (finished, cancelled or timed out). Open the connect link again to start over.',
      'bad',
    );
  // Polls that find the session gone say so, unless this page ended it itself (Cancel).
  const gone = () => {
    if (running) endedElsewhere();
  };

  // Inputs go one after another, in the order the human made them.
  let queue = Promise.resolve();
  const send = (path, body) => {
    queue = queue
      .then(() => (running ? post(path, body) : undefined))
      .then((res) => {
        if (res && res.status === 404) gone();
      })
      .catch(() => {});
    return queue;
  };

  // Frames: the next one is asked for when the last one has arrived.
  const nextFrame = () => {
    if (!running) return;
    frameNo += 1;
    live.src = `${base}/frame.jpg?n=${frameNo}`;
  };
  live.addEventListener('load', () => setTimeout(nextFrame, 120));
  live.addEventListener('error', () => setTimeout(nextFrame, 1000));

  const pollState = async () => {
    if (!running) return;
    try {
      const res = await fetch(`${base}/state`, { credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (res.status === 404) return gone();
      if (res.ok) remoteUrl.textContent = (await res.json()).url;
    } catch {}
    setTimeout(pollState, 1500);
  };
  pollState();
  setTimeout(nextFrame, 200);

  // From the shown size back to the remote viewport's pixels.
  const point = (event) => ({
    x: Math.round((event.offsetX * width) / live.clientWidth),
    y: Math.round((event.offsetY * height) / live.clientHeight),
  });
  live.addEventListener('click', (event) => {
    live.focus();
    status.hidden = true;
    send('click', point(event));
  });
  live.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      send('scroll', { dy: Math.round(event.deltaY) });
    },
    { passive: false },
  );

  // Printable characters are batched into one `type`; named keys go as they are.
  let text = '';
  let flushTimer;
  const flush = () => {
    clearTimeout(flushTimer);
    if (!text) return;
    send('type', { text });
    text = '';
  };
  // Named keys forwarded as they are: the server's list, from the page.
  const NAMED = new Set(root.dataset.keys.split(' '));
  live.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'a') {
      event.preventDefault();
      flush();
      send('key', { key: event.metaKey ? 'Meta+a' : 'Control+a' });
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return; // let the human's own shortcuts (paste) work
    if (event.key.length === 1) {
      event.preventDefault();
      text += event.key;
      clearTimeout(flushTimer);
      flushTimer = setTimeout(flush, 40);
    } else if (NAMED.has(event.key)) {
      event.preventDefault();
      flush();
      send('key', { key: event.key === 'Tab' && event.shiftKey ? 'Shift+Tab' : event.key });
    }
  });
  document.addEventListener('paste', (event) => {
    if (document.activeElement !== live) return;
    const pasted = event.clipboardData ? event.clipboardData.getData('text') : '';
    if (pasted) {
      event.preventDefault();
      flush();
      send('type', { text: pasted.slice(0, 1000) });
    }
  });

  const captureButton = document.getElementById('capture-button');
  const cancelButton = document.getElementById('cancel-button');
  captureButton.addEventListener('click', async () => {
    flush();
    await queue;
    captureButton.disabled = true;
    show('info', 'Checking the sign-in…');
    try {
      const res = await post('capture');
      if (res.status === 404) return gone();
      const body = await res.json();
      if (body.ok || body.status === 'expired') ended(body.title, body.message, body.ok ? 'ok' : 'bad');
      else show('bad', body.message || 'Capture failed; try again.');
    } catch {
      show('bad', 'Switchboard did not answer; try again.');
    } finally {
      captureButton.disabled = false;
    }
  });
  cancelButton.addEventListener('click', async () => {
    flush();
    running = false;
    const res = await post('cancel').catch(() => undefined);
    if (res?.ok) {
      const body = await res.json();
      ended(body.title, body.message, 'info');
    } else endedElsewhere();
  });
})();
