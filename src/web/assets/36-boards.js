// Issue boards (a project's or a group's): drag a card to another list. The drop posts the same move as the card's "Move to" form (with
// the page's CSRF token) and reloads the board, so what is shown is what the server did; without JavaScript the
// forms do it.
(() => {
  const board = document.querySelector('[data-board]');
  if (!board) return;
  const token = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
  let dragged = null;
  board.addEventListener('dragstart', (ev) => {
    const card = ev.target instanceof Element ? ev.target.closest('[data-board-card]') : null;
    if (!card) return;
    dragged = card;
    card.classList.add('board-card-dragging');
    ev.dataTransfer?.setData('text/plain', card.dataset.iid ?? '');
  });
  board.addEventListener('dragend', () => {
    dragged?.classList.remove('board-card-dragging');
    dragged = null;
  });
  board.addEventListener('dragover', (ev) => {
    if (dragged && ev.target instanceof Element && ev.target.closest('[data-board-list]')) ev.preventDefault();
  });
  board.addEventListener('drop', async (ev) => {
    const list = ev.target instanceof Element ? ev.target.closest('[data-board-list]') : null;
    if (!dragged || !list) return;
    ev.preventDefault();
    const from = dragged.dataset.list;
    const to = list.dataset.boardList;
    if (!to || from === to) return;
    list.querySelector('[data-board-cards]')?.prepend(dragged);
    const body = new URLSearchParams({
      authenticity_token: token,
      project_id: dragged.dataset.project ?? '',
      iid: dragged.dataset.iid ?? '',
      from_list_id: from ?? '',
      to_list_id: to,
    });
    await fetch(board.dataset.move, { method: 'POST', body, headers: { 'X-CSRF-Token': token }, credentials: 'same-origin' }).catch(() => null);
    window.location.reload();
  });
})();
