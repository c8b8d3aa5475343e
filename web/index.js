// The front page: shows the base URLs with this gateway's own address, as the browser reached it.
for (const el of document.querySelectorAll('[data-base]')) el.textContent = location.origin + el.dataset.base;
