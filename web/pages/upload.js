// The files page's upload, with its progress: the bytes as they are
// sent, then each stage the server reports (reading, typing and storing),
// then the files page with what happened. Without this script the form
// posts as it is and the server answers with that page.
(() => {
  "use strict";
  const form = document.getElementById("upload");
  const status = document.getElementById("upload-status");
  const bar = document.getElementById("upload-bar");
  if (!form || !status || !bar || !window.XMLHttpRequest || !window.FormData) {
    return;
  }
  const size = (n) => n < 1000 ? n + " bytes" : n < 1e6 ? (n / 1e3).toFixed(1) + " kB" : (n / 1e6).toFixed(1) + " MB";
  const words = {"receiving": "Receiving", "reading": "Reading the file", "typing and storing": "Typing and storing the columns"};
  const say = (text, done, total) => {
    status.textContent = text;
    bar.hidden = false;
    if (total > 0) {
      bar.max = total;
      bar.value = done;
    } else {
      bar.removeAttribute("value");
    }
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const button = form.querySelector("button[type=submit]");
    const xhr = new XMLHttpRequest();
    let read = 0;
    const lines = (last) => {
      const text = xhr.responseText;
      let end = text.lastIndexOf("\n");
      if (last) {
        end = text.length;
      }
      for (const l of text.slice(read, end).split("\n")) {
        if (!l.trim()) {
          continue;
        }
        const p = JSON.parse(l);
        if (p.location) {
          say("Done.", 1, 1);
          window.location.assign(p.location);
          return;
        }
        say((words[p.stage] || p.stage) + "…");
      }
      read = Math.max(read, end);
    };
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Accept", "application/x-ndjson");
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) {
        say("Sending: " + size(e.loaded) + " of " + size(e.total), e.loaded, e.total);
      }
    };
    xhr.upload.onload = () => say("Sent; the server takes the file…");
    xhr.onprogress = () => lines(false);
    xhr.onload = () => {
      if (xhr.status !== 200) {
        window.location.assign("/files?msg=" + encodeURIComponent("Not done: the server answered " + xhr.status + "."));
        return;
      }
      lines(true);
    };
    xhr.onerror = () => {
      say("Not done: the connection broke. Try again.");
      button.disabled = false;
    };
    button.disabled = true;
    say("Sending…");
    xhr.send(new FormData(form));
  });
})();
