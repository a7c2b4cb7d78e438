// Marks each table box whose table is wider than the box (it scrolls sideways), so its scroll hint shows;
// checked again when the window is resized. Without JavaScript the table still scrolls, with no hint.
(function () {
  function mark() {
    document.querySelectorAll('.table-wrap').forEach(function (box) {
      var table = box.querySelector('table');
      if (table && table.scrollWidth > box.clientWidth + 1) box.setAttribute('data-scrolls', '');
      else box.removeAttribute('data-scrolls');
    });
  }
  mark();
  window.addEventListener('resize', mark);
})();
