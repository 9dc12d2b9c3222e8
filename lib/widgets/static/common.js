/* The toolkit every view uses, the markup helpers the views draw with, and the start-up of a
 * rendered view.
 *
 * Every view is drawn here, by JavaScript, from the data Python computed: S2S.draw.<name> =
 * function (data) returns the view's markup (hidden.js, map.js, beam.js, stepper.js, bleu.js);
 * the Playground page calls the hidden and beam ones with data it computes in the browser. Then
 * S2S.views.<name> = function (root, data, kit) wires the interaction of the markup: root is the
 * view's element (class "s2sw"), data the view's JSON, kit = S2S.kit(root). See
 * lib/widgets/render.py for how the files reach a page.
 */
/* exported S2S */
"use strict";

var S2S = {views: {}, draw: {}};

// CSS properties copied onto an SVG's elements before it is saved as PNG: an image drawn from
// an SVG file sees none of the page's stylesheets.
S2S.STYLE_PROPS = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray",
  "stroke-opacity", "opacity", "display", "font-size", "font-weight", "font-family",
  "font-style", "text-anchor", "dominant-baseline", "image-rendering"];
S2S.PNG_SCALE = 2;  // device pixels per SVG unit in a saved PNG
S2S.TOKEN_CHARS = 14;  // a token label's characters before it is cut (the full token is a tooltip)

// ---------------------------------------------------------------------------------------------
// Markup helpers
// ---------------------------------------------------------------------------------------------

/** Escape text for HTML content and attribute values. */
S2S.esc = function (s) {
  return String(s).replace(/[&<>"']/g, function (c) {
    return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#x27;"}[c];
  });
};

/** Cut a long token so it fits a box; the full token goes in a tooltip. */
S2S.short = function (token, width) {
  width = width || S2S.TOKEN_CHARS;
  return token.length <= width ? token : token.slice(0, width - 1) + "…";
};

/** A score for display with `decimals` decimals (2 by default) and a real minus sign. */
S2S.fmt = function (x, decimals) {
  if (x === -Infinity) return "−∞";
  return x.toFixed(decimals === undefined ? 2 : decimals).replace("-", "−");
};

/** The view's title line, with the "save" buttons (HTML, and PNG unless png is false). */
S2S.header = function (titleHtml, png) {
  var buttons = "<button type=\"button\" data-save=\"html\" title=\"Download this view as a " +
    "self-contained HTML page\">Save HTML</button>";
  if (png !== false) {
    buttons += "<button type=\"button\" data-save=\"png\" title=\"Download the figure as a " +
      "PNG image\">PNG</button>";
  }
  return "<div class=\"s2s-head\"><h4>" + titleHtml + "</h4><span class=\"s2s-tools s2s-js\">" +
    buttons + "</span></div>";
};

/** A row of toggle buttons [[value, text], ...]; the view listens to [data-group=name]. */
S2S.buttonGroup = function (name, options, pressed, label) {
  var esc = S2S.esc, buttons = options.map(function (o) {
    return "<button type=\"button\" data-value=\"" + esc(o[0]) + "\" aria-pressed=\"" +
      String(String(o[0]) === String(pressed)) + "\">" + esc(o[1]) + "</button>";
  }).join("");
  return "<span class=\"s2s-js\">" + (label ? "<label>" + esc(label) + "</label>" : "") +
    "<span class=\"s2s-group\" data-group=\"" + name + "\">" + buttons + "</span></span>";
};

S2S.slider = function (name, lo, hi, value, label) {
  return "<label class=\"s2s-js\">" + S2S.esc(label) + " <input type=\"range\" data-slider=\"" +
    name + "\" min=\"" + lo + "\" max=\"" + hi + "\" step=\"1\" value=\"" + value + "\"></label>";
};

// ---------------------------------------------------------------------------------------------
// Scatter plots on two principal components: a sentence's trajectory (hidden.js) and the map of
// many sentences' context vectors (map.js)
// ---------------------------------------------------------------------------------------------

S2S.WIDTH = 696;  // SVG user units of a figure; the SVGs scale down to narrower columns
S2S.AXIS_LEFT = 26;  // room for the vertical axis's label
S2S.AXIS_BOTTOM = 24;  // room for the horizontal axis's label
// Distinct colours for groups of points (Tableau 10, readable on white and on dark grey).
S2S.CATEGORICAL = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
  "#ff9da7", "#9c755f", "#bab0ac"];

/** Scale points [[x, y]] into the box with equal x and y scales (PCA distances are real). */
S2S.fit = function (points, x0, y0, w, h) {
  var lo = [Infinity, Infinity], hi = [-Infinity, -Infinity];
  points.forEach(function (p) {
    for (var d = 0; d < 2; d++) {
      lo[d] = Math.min(lo[d], p[d]);
      hi[d] = Math.max(hi[d], p[d]);
    }
  });
  var scale = Math.min(w / Math.max(hi[0] - lo[0], 1e-9), h / Math.max(hi[1] - lo[1], 1e-9));
  var cx = (lo[0] + hi[0]) / 2, cy = (lo[1] + hi[1]) / 2;
  return points.map(function (p) {
    return [x0 + w / 2 + (p[0] - cx) * scale, y0 + h / 2 - (p[1] - cy) * scale];
  });
};

/** The scatter plot's two axes, from AXIS_LEFT to `right`, and their labels: the share of the
 * variance along each direction. */
S2S.axes = function (height, right, explained) {
  var ml = S2S.AXIS_LEFT, bottom = height - S2S.AXIS_BOTTOM;
  function percent(share) { return Math.round(share * 100) + "%"; }
  return "<line class=\"axis\" x1=\"" + ml + "\" y1=\"" + bottom + "\" x2=\"" + right +
    "\" y2=\"" + bottom + "\"/><line class=\"axis\" x1=\"" + ml + "\" y1=\"0\" x2=\"" + ml +
    "\" y2=\"" + bottom + "\"/><text class=\"axl\" x=\"" + ((right + ml) / 2).toFixed(0) +
    "\" y=\"" + (height - 6) + "\" text-anchor=\"middle\">PC1 · " + percent(explained[0]) +
    " of the variance</text><text class=\"axl\" transform=\"translate(14 " +
    (bottom / 2).toFixed(0) + ") rotate(-90)\" text-anchor=\"middle\">PC2 · " +
    percent(explained[1]) + "</text>";
};

// ---------------------------------------------------------------------------------------------
// The toolkit
// ---------------------------------------------------------------------------------------------

S2S.kit = function (root) {
  var esc = S2S.esc;
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
// changed it: its data and scripts, so the saved page draws the view again as it started. A view
// mounted on a page of its own (the Playground) has none: it keeps only the PNG button.
S2S.saveButtons = function (root, data, kit, pristine) {
  kit.qa("[data-save]").forEach(function (b) {
    if (b.getAttribute("data-save") === "html" && !pristine) {
      b.remove();
      return;
    }
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

// Draw and wire the views `names` in `root` from `data`. The drawn markup goes first in root,
// in the order of `names`, before what Python put there (the <noscript> text).
S2S.mount = function (root, names, data, pristine) {
  root.classList.add("js");
  root.insertAdjacentHTML("afterbegin", names.map(function (name) {
    return S2S.draw[name] ? S2S.draw[name](data) : "";
  }).join(""));
  var kit = S2S.kit(root);
  S2S.saveButtons(root, data, kit, pristine);
  names.forEach(function (name) { S2S.views[name](root, data, kit); });
};

// Start the rendered fragment `uid` (render.View.to_html): its elements are uid + "-out" (the
// whole fragment), uid (the view) and uid + "-data" (its JSON); `names` are its S2S.views.
S2S.start = function (uid, names) {
  var out = document.getElementById(uid + "-out"), root = document.getElementById(uid);
  if (!out || !root || root.getAttribute("data-ready")) return;  // already started
  var pristine = out.outerHTML;
  root.setAttribute("data-ready", "1");
  S2S.mount(root, names, JSON.parse(document.getElementById(uid + "-data").textContent),
    pristine);
};
