// The probe's panel: shows the motto from its own route.

import { api } from "/static/js/api.js";

export function mount({ onError }) {
  const ready = api("GET", "/api/probe/motto")
    .then((body) => {
      document.querySelector("#probe-motto").textContent = body.motto;
      document.body.dataset.probeMounted = "true";
    })
    .catch(onError);
  return { ready };
}
