// The document viewer opens at the cited passage (the <mark> the server put around it).
"use strict";

(() => {
  const passage = document.getElementById("passage");
  if (passage) {
    passage.scrollIntoView({ block: "center" });
    passage.focus({ preventScroll: true });
  }
})();
