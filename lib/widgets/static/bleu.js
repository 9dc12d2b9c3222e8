/* The BLEU explorer: S2S.draw.bleu draws each hypothesis above its references with every token
 * marked by the n-grams it takes part in, the clipped counts and precisions, the n-grams of each
 * order, the brevity penalty and the formula with its numbers; S2S.views.bleu wires the order
 * buttons, which set data-order so that bleu.css highlights that order's tokens and rows.
 *
 * data (bleu_view.py's BleuTrace): {hypotheses, hyp_tokens, ref_tokens,
 *   marks: [per sentence {hyp: [per order [per token "m" | "x" | ""]], refs: [per reference,
 *           the same]}] ("m": in a credited n-gram, "x": only in n-grams beyond the clip limit),
 *   details: [per order [[n-gram, count, max count in a reference, clipped count]]] (summed),
 *   counts, totals (clipped matches and n-grams per order), sys_len, ref_len,
 *   ref_lens (per sentence, its references' lengths), result: {score, precisions, bp,
 *   effective_order, tokenize, lowercase}, signature, corpus, sentence_scores}
 */
/* global S2S */
(function () {
  "use strict";

  var esc = S2S.esc;

  function tokens(toks, marks) {
    return toks.map(function (tok, i) {
      var attrs = marks.map(function (m, n) {
        return m[i] ? " data-n" + (n + 1) + "=\"" + m[i] + "\"" : "";
      }).join("");
      return "<span class=\"tk\"" + attrs + ">" + esc(tok) + "</span>";
    }).join(" ");
  }

  function line(name, toks, marks) {
    return "<div class=\"s2s-line\"><b>" + name + "</b>" + tokens(toks, marks) + "</div>";
  }

  /** Each hypothesis above its references, tokens marked for every order. */
  function sentences(data) {
    return data.hyp_tokens.map(function (hyp, s) {
      var refs = data.ref_tokens[s], marks = data.marks[s];
      var lines = [line("hypothesis", hyp, marks.hyp)].concat(refs.map(function (ref, r) {
        return line(refs.length === 1 ? "reference" : "reference " + (r + 1), ref,
          marks.refs[r]);
      }));
      var extra = data.corpus ? "<div class=\"s2s-sub\">sentence BLEU " +
        data.sentence_scores[s].toFixed(1) + "</div>" : "";
      return "<div class=\"s2s-sent\">" + lines.join("") + extra + "</div>";
    }).join("");
  }

  /** Clipped matches, n-gram counts and the (smoothed) precision of each order. */
  function precisions(data) {
    var rows = data.counts.map(function (m, i) {
      var t = data.totals[i], p = data.result.precisions[i];
      var raw = t ? (100 * m / t).toFixed(1) + "%" : "—";
      var shown = t && Math.abs(100 * m / t - p) < 1e-9 ? raw :
        t && p ? raw + " → " + p.toFixed(2) + "% (smoothed)" : raw;
      return "<tr data-n=\"" + (i + 1) + "\"><td>" + (i + 1) + "</td><td>" + m + "</td><td>" + t +
        "</td><td>" + shown + "</td></tr>";
    });
    return "<table><tr><th>n</th><th>matched (clipped)</th><th>n-grams</th><th>p<sub>n</sub>" +
      "</th></tr>" + rows.join("") + "</table>";
  }

  /** One table per order: each n-gram, its count, the most any reference holds, its credit. */
  function ngrams(data) {
    return data.details.map(function (all, i) {
      var n = i + 1, shown = data.corpus ? all.filter(function (d) { return d[2]; }) : all;
      var body = shown.map(function (d) {
        return "<tr><td class=\"l s2s-mono\">" + esc(d[0]) + "</td><td>" + d[1] + "</td><td>" +
          d[2] + "</td><td style=\"color:var(--" + (d[3] ? "good" : "muted") + ")\">" + d[3] +
          "</td></tr>";
      }).join("");
      var rest = all.length - shown.length;
      if (rest) {
        body += "<tr><td class=\"l\" colspan=\"4\">… and " + rest + " " + n + "-grams found in " +
          "no reference</td></tr>";
      }
      return "<div class=\"ngr\" data-n=\"" + n + "\"><table><tr><th class=\"l\">" + n +
        "-gram</th><th>in hypothesis</th><th>max in a reference</th><th>credited</th></tr>" +
        (data.corpus ? "<tr><td class=\"l\" colspan=\"4\">(summed over the sentences)</td></tr>" :
          "") + (body || "<tr><td class=\"l\">(none)</td></tr>") + "</table></div>";
    }).join("");
  }

  /** The brevity penalty, the formula with its numbers, and a note on the order (and, for a
   * corpus, why its BLEU is not the mean of the sentence BLEUs). */
  function score(data) {
    var res = data.result, N = data.counts.length, c = data.sys_len, r = data.ref_len;
    var bp = res.bp.toFixed(3);
    var why = data.ref_lens.every(function (x) { return x.length === 1; }) ? "one reference" :
      "for each sentence, the reference closest in length to the hypothesis";
    var bpText = c >= r ? "c = " + c + " hypothesis tokens ≥ r = " + r + ": BP = 1" :
      "c = " + c + " hypothesis tokens &lt; r = " + r + " reference tokens (" + why + "): " +
      "BP = exp(1 − " + r + "/" + c + ") = " + bp;
    var used = res.precisions.filter(function (p) { return p > 0; }).length;
    var order = res.effective_order ? used : N, formula;
    if (res.score > 0) {
      var logs = res.precisions.slice(0, order).map(function (p) {
        return "log " + (p / 100).toFixed(3);
      }).join(" + ");
      formula = "BLEU = BP · exp((1/" + order + ") Σ log p<sub>n</sub>) = " + bp + " · exp((" +
        logs + ") / " + order + ") = ";
    } else {
      formula = "BLEU = 0: no n-gram matched (or a precision is 0) = ";
    }
    var note = res.effective_order && order < N ? " Only orders 1–" + order + " count: the " +
      "hypothesis has no longer n-grams (sentence BLEU's effective order)." : "";
    if (data.corpus) {
      var sum = data.sentence_scores.reduce(function (a, b) { return a + b; }, 0);
      note += "<br>Corpus BLEU adds up the counts of all " + data.hypotheses.length +
        " sentences before dividing: it is not the mean of their sentence BLEUs (" +
        (sum / data.sentence_scores.length).toFixed(2) + ").";
    }
    return "<p>Brevity penalty: " + bpText + ".</p><p class=\"s2s-score\">" + formula + "<b>" +
      res.score.toFixed(2) + "</b></p><p class=\"s2s-note\">" + note + "<br><span " +
      "class=\"s2s-mono\">" + esc(data.signature) + "</span></p>";
  }

  S2S.draw.bleu = function (data) {
    var res = data.result, orders = data.counts.map(function (c, i) {
      return [String(i + 1), (i + 1) + "-grams"];
    });
    return S2S.header((data.corpus ? "Corpus BLEU" : "Sentence BLEU") +
        ", n-gram by n-gram", false) +
      "<p class=\"s2s-sub\">Tokens of the chosen order's matching n-grams are green; a " +
      "repeated n-gram beyond what any one reference holds is clipped (struck out). Tokens as " +
      "BLEU counts them (" + esc(res.tokenize) + " tokenisation" +
      (res.lowercase ? ", lowercased" : "") + ").</p><div class=\"s2s-bleu\" " +
      "data-order=\"1\"><div class=\"s2s-bar\">" +
      S2S.buttonGroup("order", orders, "1", "highlight:") + "</div>" + sentences(data) +
      "<div class=\"s2s-cols\"><div>" + precisions(data) + "</div><div>" + ngrams(data) +
      "</div></div>" + score(data) + "</div>";
  };

  S2S.views.bleu = function (root, data, kit) {
    var q = kit.q, qa = kit.qa, press = kit.press;
    var box = q(".s2s-bleu");
    qa("[data-group=\"order\"] button").forEach(function (b) {
      b.addEventListener("click", function () {
        box.setAttribute("data-order", b.getAttribute("data-value"));
        press(q("[data-group=\"order\"]"), b.getAttribute("data-value"));
      });
    });
  };
}());
