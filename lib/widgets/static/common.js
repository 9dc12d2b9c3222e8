/* The toolkit every view uses, and the start-up of a rendered view.
 *
 * A view's markup (SVG and HTML) is drawn in Python, so it reads without JavaScript; each view
 * file (hidden.js, beam.js, ...) adds S2S.views.<name> = function (root, data, kit), which wires
 * the interaction of that markup: root is the view's element (class "s2sw"), data the view's
 * JSON, kit = S2S.kit(root). See lib/widgets/render.py for how the files reach a page.
 */
/* exported S2S */
"use strict";

var S2S = {views: {}};

// CSS properties copied onto an SVG's elements before it is saved as PNG: an image drawn from
// an SVG file sees none of the page's stylesheets.
S2S.STYLE_PROPS = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray",
  "stroke-opacity", "opacity", "display", "font-size", "font-weight", "font-family",
  "font-style", "text-anchor", "dominant-baseline", "image-rendering"];
S2S.PNG_SCALE = 2;  // device pixels per SVG unit in a saved PNG

S2S.kit = function (root) {
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"}[c];
    });
  }
  function qa(sel, el) { return Array.prototype.slice.call((el || root).querySelectorAll(sel)); }
  function q(sel, el) { return (el || root).querySelector(sel); }
  function press(group, value) {
    qa("button", group).forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-value") === String(value)));
    });
  }
  function download(name, blob) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 2000);
  }
  function savePng(svg, name) {
    var copy = svg.cloneNode(true), src = [svg].concat(qa("*", svg)),
      dst = [copy].concat(qa("*", copy));
    src.forEach(function (el, i) {
      var cs = getComputedStyle(el);
      S2S.STYLE_PROPS.forEach(function (p) {
        dst[i].style.setProperty(p, cs.getPropertyValue(p));
      });
    });
    var box = svg.viewBox.baseVal, scale = S2S.PNG_SCALE;
    copy.setAttribute("width", box.width);
    copy.setAttribute("height", box.height);
    var bg = getComputedStyle(root).backgroundColor;
    var img = new Image();
    img.onload = function () {
      var c = document.createElement("canvas");
      c.width = box.width * scale;
      c.height = box.height * scale;
      var ctx = c.getContext("2d");
      ctx.fillStyle = bg;
      ctx.fillRect(0, 0, c.width, c.height);
      ctx.drawImage(img, 0, 0, c.width, c.height);
      c.toBlob(function (b) { download(name + ".png", b); }, "image/png");
    };
    var text = new XMLSerializer().serializeToString(copy);
    img.src = URL.createObjectURL(new Blob([text], {type: "image/svg+xml"}));
  }
  return {esc: esc, q: q, qa: qa, press: press, download: download, savePng: savePng};
};

// The "Save HTML" and "PNG" buttons. `pristine` is the fragment's markup before any script
// changed it: the saved page starts as the view did.
S2S.saveButtons = function (root, data, kit, pristine) {
  kit.qa("[data-save]").forEach(function (b) {
    b.addEventListener("click", function () {
      if (b.getAttribute("data-save") === "html") {
        var doc = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
          kit.esc(data.title) + "</title></head><body>\n" + pristine + "\n</body></html>\n";
        kit.download(data.name + ".html", new Blob([doc], {type: "text/html"}));
      } else {
        var svgs = kit.qa("svg.s2s-fig").filter(function (s) { return s.getClientRects().length; });
        if (svgs.length) kit.savePng(svgs[0], data.name);
      }
    });
  });
};

// Start the rendered fragment `uid` (render.View.to_html): its elements are uid + "-out" (the
// whole fragment), uid (the view) and uid + "-data" (its JSON); `names` are its S2S.views.
S2S.start = function (uid, names) {
  var out = document.getElementById(uid + "-out"), root = document.getElementById(uid);
  if (!out || !root || root.getAttribute("data-ready")) return;  // already started
  var pristine = out.outerHTML;
  root.setAttribute("data-ready", "1");
  root.classList.add("js");
  var data = JSON.parse(document.getElementById(uid + "-data").textContent);
  var kit = S2S.kit(root);
  S2S.saveButtons(root, data, kit, pristine);
  names.forEach(function (name) { S2S.views[name](root, data, kit); });
};
