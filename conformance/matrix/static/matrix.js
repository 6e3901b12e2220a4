// Filtering and sorting on top of the matrix page. The page is complete without this
// script: it only hides rows and reorders them within their suite.
(function () {
  "use strict";
  var grid = document.getElementById("grid");
  var controls = document.getElementById("controls");
  if (!grid || !controls) {
    return;
  }
  // The outcome vocabulary is the kit's (conformance/results/outcomes.py), written
  // into the page by the template, never repeated here.
  var FAILING = grid.getAttribute("data-failing").split(" ");
  var text = document.getElementById("filter-text");
  var status = document.getElementById("filter-status");
  var hidePassing = document.getElementById("filter-hide-passing");
  var counter = document.getElementById("filter-count");
  var rows = Array.prototype.slice.call(grid.querySelectorAll("tr.contract-row"));

  function rowShown(row) {
    var outcomes = row.getAttribute("data-outcomes").split(" ");
    var needle = text.value.trim().toLowerCase();
    if (needle && row.getAttribute("data-contract").indexOf(needle) < 0) {
      return false;
    }
    var wanted = status.value;
    if (wanted === "failing" && !outcomes.some(function (o) { return FAILING.indexOf(o) >= 0; })) {
      return false;
    }
    if (wanted && wanted !== "failing" && outcomes.indexOf(wanted) < 0) {
      return false;
    }
    return !(hidePassing.checked && outcomes.length === 1 && outcomes[0] === "passed");
  }

  function filter() {
    var shown = 0;
    rows.forEach(function (row) {
      row.hidden = !rowShown(row);
      shown += row.hidden ? 0 : 1;
    });
    Array.prototype.forEach.call(grid.tBodies, function (body) {
      body.hidden = !body.querySelector("tr.contract-row:not([hidden])");
    });
    counter.textContent = shown + " of " + rows.length + " contracts shown";
  }

  function sortBy(header) {
    var key = header.getAttribute("data-sort");
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    grid.querySelectorAll("thead th[data-sort]").forEach(function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    function value(row) {
      return key === "contract" ? row.getAttribute("data-contract")
        : Number(row.cells[Number(key)].getAttribute("data-sort"));
    }
    Array.prototype.forEach.call(grid.tBodies, function (body) {
      var sorted = Array.prototype.slice.call(body.querySelectorAll("tr.contract-row"));
      sorted.sort(function (a, b) {
        var x = value(a), y = value(b);
        var order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      sorted.forEach(function (row) { body.appendChild(row); });
    });
  }

  grid.querySelectorAll("thead th[data-sort]").forEach(function (header) {
    header.tabIndex = 0;
    header.title = "sort by this column";
    header.addEventListener("click", function () { sortBy(header); });
    header.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        sortBy(header);
      }
    });
  });
  [text, status, hidePassing].forEach(function (control) {
    control.addEventListener("input", filter);
    control.addEventListener("change", filter);
  });
  controls.hidden = false;
  filter();
})();
