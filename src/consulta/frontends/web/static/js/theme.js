// The page's theme before anything is drawn (no flash of the other one): the person's choice, remembered in
// localStorage, else the system's preference (the stylesheet follows prefers-color-scheme by itself).
// A classic script, not a module, so that it runs before the first paint.
(function () {
  try {
    const saved = localStorage.getItem("consulta.theme");
    if (saved === "dark" || saved === "light") {
      document.documentElement.dataset.theme = saved;
    }
  } catch (error) {
    // storage refused (a private window): the system's preference it is
  }
})();
