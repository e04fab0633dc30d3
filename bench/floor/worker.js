// The floor for the webhook benchmark: no body read, no binding, just 200. Whatever a request
// costs here is wrangler dev + workerd + HTTP, which every Worker pays.
export default {
  fetch() {
    return new Response("ok");
  },
};
