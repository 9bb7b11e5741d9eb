// The studio bench's floor page (studio-floor.ts builds and serves it): fetches the nodes, edges
// and view the studio ends up with for a flow, and draws them with bare Svelte Flow.
import { mount } from 'svelte';
import Floor from './Floor.svelte';

const states = new URLSearchParams(location.search).get('states');
const data = await (await fetch(`./data-${states}.json`)).json();
mount(Floor, { target: document.getElementById('app'), props: { data } });
