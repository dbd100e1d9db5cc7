/** What grounding.json and grounding.sse decode to (segment byte offsets converted to string indexes). */
export const GROUNDING_CITATIONS = [
  { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA', title: 'uefa.com', startIndex: 0, endIndex: 29 },
  { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA', title: 'uefa.com', startIndex: 30, endIndex: 55 },
  { url: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/BBB', title: 'aljazeera.com', startIndex: 30, endIndex: 55 },
];

export const GROUNDING_SEARCH = {
  queries: ['UEFA Euro 2024 winner', 'who won euro 2024'],
  searchEntryPointHtml:
    '<style>.container{display:flex}</style><div class="container"><a class="chip" href="https://www.google.com/search?q=who+won+euro+2024">who won euro 2024</a></div>',
  billedQueries: 2,
};
