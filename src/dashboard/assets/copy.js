// "Copiar" buttons: copy the text of the element named by data-copy. Without JavaScript the buttons stay
// hidden and the text can be selected by hand.
document.querySelectorAll('[data-copy]').forEach(function (button) {
  button.hidden = false;
  button.addEventListener('click', function () {
    var source = document.getElementById(button.getAttribute('data-copy'));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = 'Copiado!';
    });
  });
});
