// The body of each fragment's <style onload="..."> handler (render.py inlines it, comment
// lines dropped): `this` is the <style>. It runs the fragment's script where the fragment was
// inserted without running it: an ipywidgets HTML widget sets innerHTML, which never runs
// scripts, and the classic Notebook's output area runs them only if it is already on the page.
// A <style> fires `load` once it is in the document; where the script did run, the view is
// marked ready and nothing happens. The copy goes to <head> and is removed at once: it runs on
// insertion and leaves the fragment (which "Save HTML" copies) untouched.
var o = this.parentNode, r = o && o.querySelector('.s2sw'),
  c = o && o.querySelector('script:not([type])');
if (r && c && !r.getAttribute('data-ready')) {
  var s = document.createElement('script');
  s.text = c.text;
  document.head.appendChild(s);
  s.remove();
}
