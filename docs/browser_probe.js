// Run in each page by docs/browser_check.py: what a reader of the page sees.
(async () => {
  const mathjax = window.MathJax;
  if (mathjax && mathjax.Hub && mathjax.Hub.Queue) {
    await new Promise((done) => mathjax.Hub.Queue(done));
  } else if (mathjax && mathjax.startup && mathjax.startup.promise) {
    await mathjax.startup.promise;
  }
  const imgs = [...document.images];
  for (const img of imgs) img.loading = "eager";
  await Promise.all(imgs.map((img) => img.decode().catch(() => null)));
  const main = document.querySelector("article.bd-article") || document.body;
  const raw = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => n.parentElement.closest("pre, code, script, style, textarea, .highlight")
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const t = n.textContent;
    const i = t.search(/\\\(|\\\[|\$\$/);
    if (i >= 0) raw.push(t.slice(Math.max(0, i - 20), i + 40).replace(/\s+/g, " "));
  }
  const rendered = main.querySelectorAll(".MathJax_CHTML, .MathJax, mjx-container").length;
  const sources = main.querySelectorAll("span.math, div.math").length;
  const errors = [...document.querySelectorAll(
    ".MathJax_Error, .mjx-merror, mjx-merror, merror, [data-mjx-error]")]
    .map((e) => (e.getAttribute("data-mjx-error") || e.textContent).slice(0, 80));
  const broken = imgs.filter((img) => !(img.complete && img.naturalWidth > 0))
    .map((img) => img.getAttribute("src"));
  const box = main.getBoundingClientRect();
  const overflow = [];
  const scrollers = [];
  for (const el of main.querySelectorAll("*")) {
    if (el.closest("pre, .highlight, script, .MJX_Assistive_MathML, .sphx-glr-script-out")) {
      continue;  // code scrolls by design; the MathML copy for screen readers is hidden
    }
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const style = getComputedStyle(el);
    if ((style.overflowX === "auto" || style.overflowX === "scroll" || style.overflowX === "hidden")
        && el.scrollWidth > el.clientWidth + 1 && !el.matches("pre, .highlight")) {
      scrollers.push(`${el.tagName.toLowerCase()}.${[...el.classList].join(".")}` +
        ` ${el.scrollWidth}px in ${el.clientWidth}px: ` +
        el.textContent.trim().slice(0, 50).replace(/\s+/g, " "));
    }
    if (r.right > box.right + 1 && !el.parentElement.closest("[data-mk-overflow]")) {
      el.setAttribute("data-mk-overflow", "");
      overflow.push(`${el.tagName.toLowerCase()} ${Math.round(r.right - box.right)}px: ` +
        el.textContent.trim().slice(0, 50).replace(/\s+/g, " "));
    }
  }
  const linkedHeadings = [...main.querySelectorAll("h1, h2, h3, h4, h5, h6")]
    .filter((h) => [...h.querySelectorAll("a")].some((a) => !a.classList.contains("headerlink")))
    .map((h) => h.textContent.replace("#", "").trim().slice(0, 60));
  const header = [...document.querySelectorAll(".bd-header a[href], .bd-header-article a[href]")]
    .map((a) => a.href);
  const sidebar = document.querySelector(".bd-sidebar-primary");
  const sectionNav = sidebar ? sidebar.querySelector("nav.bd-docs-nav") : null;
  const sectionLinks = sectionNav ? [...sectionNav.querySelectorAll("a[href]")].map((a) => a.href) : [];
  const sidebarShown = sidebar ? getComputedStyle(sidebar).display !== "none" : false;
  return {raw, rendered, sources, errors, broken, overflow, scrollers, linkedHeadings,
          header, sectionLinks, sidebarShown,
          height: document.documentElement.scrollHeight,
          typeset: !!(mathjax && (mathjax.Hub || mathjax.startup))};
})()
