// A small element builder: h("li", {class: ["card", "plan"], ...}, child, ...). String children become text nodes,
// never HTML, so what the model or the data says is shown, not run.

export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (key === "class") {
      node.classList.add(...(Array.isArray(value) ? value : [value]).filter(Boolean));
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else if (key === "on") {
      for (const [event, handler] of Object.entries(value)) {
        node.addEventListener(event, handler);
      }
    } else if (key in node && !key.includes("-")) {
      node[key] = value;
    } else {
      node.setAttribute(key, value === true ? "" : value);
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) {
      continue;
    }
    if (Array.isArray(child)) {
      append(node, child);
    } else {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}
