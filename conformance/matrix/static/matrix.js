// Filters and sorting on top of the overview (#overview) and the grid pages (#grid).
// Each page is complete without this script: it only hides rows and columns, reorders
// rows, keeps the filters in the URL (so a filtered view is a link to share), and
// lets a click on any grid cell open that contract's tests.
(function () {
  "use strict";
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };

  // Natural order: numbers as numbers, text with "vendor2" before "vendor10".
  function compare(x, y) {
    var a = Number(x), b = Number(y);
    if (x !== "" && y !== "" && !isNaN(a) && !isNaN(b)) {
      return a - b;
    }
    return collator.compare(x, y);
  }

  // The form's named controls mirror the URL's query: read on load, written on change.
  function bindToUrl(form, apply) {
    var params = new URLSearchParams(window.location.search);
    each(form.elements, function (control) {
      if (control.name && params.has(control.name)) {
        if (control.type === "checkbox") {
          control.checked = params.get(control.name) === control.value;
        } else {
          control.value = params.get(control.name);
        }
      }
    });
    function update() {
      var query = new URLSearchParams();
      each(form.elements, function (control) {
        var on = control.type === "checkbox" ? control.checked : control.value;
        if (control.name && on) {
          query.set(control.name, control.value);
        }
      });
      var text = query.toString();
      try {
        window.history.replaceState(null, "", (text ? "?" + text : window.location.pathname) + window.location.hash);
      } catch (error) {
        // Some browsers refuse it for file:// pages; the filter still applies.
      }
      apply();
    }
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.hidden = false;
    apply();
  }

  // Sort buttons in header cells: ``value(row, header)`` gives what a row sorts by.
  function sortable(headers, bodies, value) {
    each(headers, function (header) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = "sort";
      button.setAttribute("aria-label", "sort by " + header.textContent.trim().split("\n")[0]);
      button.addEventListener("click", function () {
        var ascending = header.getAttribute("aria-sort") !== "ascending";
        each(headers, function (th) { th.removeAttribute("aria-sort"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        each(bodies, function (body) {
          var rows = Array.prototype.slice.call(body.querySelectorAll("tr[data-sortable]"));
          rows.sort(function (a, b) {
            var order = compare(value(a, header), value(b, header));
            return ascending ? order : -order;
          });
          rows.forEach(function (row) { body.appendChild(row); });
        });
      });
      header.appendChild(button);
    });
  }

  function overview(table) {
    var form = document.getElementById("controls");
    var rows = table.tBodies[0].rows;
    var counter = document.getElementById("filter-count");
    var field = function (name) { return form.elements[name].value; };
    each(rows, function (row) { row.setAttribute("data-sortable", ""); });
    bindToUrl(form, function () {
      var shown = 0;
      var needle = field("q").trim().toLowerCase();
      each(rows, function (row) {
        var failing = row.getAttribute("data-failing").split(" ");
        row.hidden = !((!needle || row.getAttribute("data-text").toLowerCase().indexOf(needle) >= 0) &&
          (!field("verdict") || row.getAttribute("data-verdict") === field("verdict")) &&
          (!field("suite") || failing.indexOf(field("suite")) >= 0) &&
          (!field("stale") || row.getAttribute("data-stale") === field("stale")) &&
          (!field("trust") || row.getAttribute("data-trust") === field("trust")));
        shown += row.hidden ? 0 : 1;
      });
      counter.textContent = shown + " of " + rows.length + " platforms shown";
    });
    sortable(table.tHead.rows[0].querySelectorAll("th[data-key]"), table.tBodies, function (row, header) {
      return row.cells[header.cellIndex].getAttribute("data-sort");
    });
  }

  function grid(table) {
    var form = document.getElementById("controls");
    var counter = document.getElementById("filter-count");
    // The outcome vocabulary is the kit's, written into the page, never repeated here.
    var failing = table.getAttribute("data-failing").split(" ");
    var severity = table.getAttribute("data-severity").split(" ");
    var heads = table.tHead.rows[0].cells;
    var rows = table.querySelectorAll("tr.contract-row");
    var hiding = document.createElement("style");
    var field = function (name) { return form.elements[name].value; };
    document.head.appendChild(hiding);
    function outcome(cell) { return cell.className.replace(/^o-/, "").split(" ")[0]; }
    each(rows, function (row) { row.setAttribute("data-sortable", ""); });
    bindToUrl(form, function () {
      var needle = field("platform").trim().toLowerCase();
      var shownColumns = [], rules = [];
      for (var i = 1; i < heads.length; i++) {
        var head = heads[i];
        var on = (!needle || head.getAttribute("data-text").toLowerCase().indexOf(needle) >= 0) &&
          (!field("kind") || head.getAttribute("data-kind") === field("kind")) &&
          (!field("verdict") || head.getAttribute("data-verdict") === field("verdict")) &&
          (!field("stale") || head.getAttribute("data-stale") === field("stale"));
        if (on) {
          shownColumns.push(i);
        } else {
          rules.push("#grid tr > :nth-child(" + (i + 1) + ")");
        }
      }
      hiding.textContent = rules.length ? rules.join(",") + "{display:none}" : "";
      var text = field("q").trim().toLowerCase(), suite = field("suite"), wanted = field("status");
      var hidePassing = form.elements.hide_passing.checked, shown = 0;
      each(rows, function (row) {
        var outcomes = shownColumns.map(function (i) { return outcome(row.cells[i]); });
        var any = function (test) { return outcomes.some(test); };
        row.hidden = !((!text || row.id.indexOf(text) >= 0) &&
          (!suite || row.parentNode.getAttribute("data-suite") === suite) &&
          (!wanted || (wanted === "failing" ? any(function (o) { return failing.indexOf(o) >= 0; })
                                            : any(function (o) { return o === wanted; }))) &&
          !(hidePassing && outcomes.every(function (o) { return o === "passed"; })));
        shown += row.hidden ? 0 : 1;
      });
      each(table.tBodies, function (body) {
        body.hidden = !body.querySelector("tr.contract-row:not([hidden])");
      });
      counter.textContent = shown + " of " + rows.length + " contracts and " + shownColumns.length +
        " of " + (heads.length - 1) + " platforms shown";
    });
    sortable(table.tHead.rows[0].querySelectorAll("th[data-sort]"), table.tBodies, function (row, header) {
      if (header.cellIndex === 0) {
        return row.id;
      }
      return String(severity.indexOf(outcome(row.cells[header.cellIndex])));
    });
    // A passing cell holds no link (the page stays small): a click opens its tests.
    table.addEventListener("click", function (event) {
      var cell = event.target.closest("td");
      if (!cell || event.target.closest("a")) {
        return;
      }
      var column = heads[cell.cellIndex].getAttribute("data-column");
      window.location.href = "../platforms/" + column + ".html#c-" + cell.parentNode.id;
    });
  }

  // A drill-down target opens its tests when the page is reached through its link.
  function openTarget() {
    var target = window.location.hash && document.getElementById(window.location.hash.slice(1));
    var details = target && target.querySelector("details.tests");
    if (details) {
      details.open = true;
    }
  }

  var table = document.getElementById("overview");
  if (table) {
    overview(table);
  }
  table = document.getElementById("grid");
  if (table && document.getElementById("controls")) {
    grid(table);
  }
  openTarget();
  window.addEventListener("hashchange", openTarget);
})();
